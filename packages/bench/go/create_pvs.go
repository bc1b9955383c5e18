package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// runCreatePVs creates --count PVs shaped like the JSON PV on stdin, named <prefix>-<i>, with
// --concurrency requests in flight and no client-side limit, and prints {"seconds": …, "cpu_seconds": …}
// on stdout: the wall time and the whole process's CPU (every thread, user and system) of the creates.
func runCreatePVs(args []string) error {
	flags := flag.NewFlagSet("create-pvs", flag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig file")
	prefix := flags.String("prefix", "", "name prefix")
	count := flags.Int("count", 0, "PVs to create")
	concurrency := flags.Int("concurrency", 4, "requests in flight")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *prefix == "" || *count < 1 || *concurrency < 1 {
		return errors.New("--prefix, --count >= 1 and --concurrency >= 1 are required")
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var template v1.PersistentVolume
	if err := json.Unmarshal(input, &template); err != nil {
		return fmt.Errorf("template PV: %w", err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	config.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	volumes := client.CoreV1().PersistentVolumes()
	ctx := context.Background()
	// One request first, so connection set-up is not part of the timing, as for the Node client.
	if _, err := volumes.List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return err
	}
	var next atomic.Int64
	var failure atomic.Value
	var wg sync.WaitGroup
	cpuBefore, err := processCPU()
	if err != nil {
		return err
	}
	started := time.Now()
	for range *concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(*count); i = next.Add(1) - 1 {
				pv := template.DeepCopy()
				pv.Name = fmt.Sprintf("%s-%d", *prefix, i)
				if _, err := volumes.Create(ctx, pv, metav1.CreateOptions{}); err != nil {
					failure.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started).Seconds()
	cpuAfter, err := processCPU()
	if err != nil {
		return err
	}
	if err, ok := failure.Load().(error); ok {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]float64{
		"seconds":     elapsed,
		"cpu_seconds": (cpuAfter - cpuBefore).Seconds(),
	})
}

// processCPU is the user and system CPU of the whole process so far, as Node's process.cpuUsage reads it.
func processCPU() (time.Duration, error) {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0, err
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()), nil
}
