package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// identityAnnotation marks the PVs of one reference provisioner, as the library's hostpath example does.
const identityAnnotation = "hostPathProvisionerIdentity"

type hostPath struct {
	root     string
	identity string
}

func (p *hostPath) Provision(_ context.Context, options controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	dir := filepath.Join(p.root, options.PVName)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        options.PVName,
			Annotations: map[string]string{identityAnnotation: p.identity},
		},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: *options.StorageClass.ReclaimPolicy,
			AccessModes:                   options.PVC.Spec.AccessModes,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: options.PVC.Spec.Resources.Requests[v1.ResourceStorage]},
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}},
		},
	}, controller.ProvisioningFinished, nil
}

func (p *hostPath) Delete(_ context.Context, volume *v1.PersistentVolume) error {
	if volume.Annotations[identityAnnotation] != p.identity {
		return &controller.IgnoredError{Reason: "identity annotation on PV does not match ours"}
	}
	return os.RemoveAll(filepath.Join(p.root, volume.Name))
}

// runProvisioner runs the library's ProvisionController until SIGTERM or SIGINT. QPS and burst 0
// keep client-go's defaults (5/10), which is what the example ships with.
func runProvisioner(args []string) error {
	flags := flag.NewFlagSet("provisioner", flag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig file")
	name := flags.String("provisioner-name", "", "provisioner name")
	root := flags.String("root", "", "directory of the volumes")
	leaseNamespace := flags.String("leader-election-namespace", "default", "namespace of the Lease")
	qps := flags.Float64("kube-api-qps", 0, "client QPS; 0 = client-go default")
	burst := flags.Int("kube-api-burst", 0, "client burst; 0 = client-go default")
	threadiness := flags.Int("threadiness", controller.DefaultThreadiness, "claim and volume workers")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *name == "" || *root == "" {
		return errors.New("--provisioner-name and --root are required")
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	config.QPS = float32(*qps)
	config.Burst = *burst
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hostname, _ := os.Hostname()
	syscall.Umask(0)
	pc := controller.NewProvisionController(ctx, client, *name, &hostPath{root: *root, identity: hostname},
		controller.LeaderElectionNamespace(*leaseNamespace),
		controller.Threadiness(*threadiness))
	pc.Run(ctx)
	return nil
}
