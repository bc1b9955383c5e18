// Command bench-go is the Go side of `npm run bench`: the reference provisioner built on
// sigs.k8s.io/sig-storage-lib-external-provisioner/v13 (the shape of the library's hostpath example,
// run with a kubeconfig) and a bare client-go client that creates PVs (the Go-client ceiling).
// The bench writes these files into its cache directory and builds them from the Go module proxy.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench-go provisioner|create-pvs [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "provisioner":
		err = runProvisioner(os.Args[2:])
	case "create-pvs":
		err = runCreatePVs(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-go:", err)
		os.Exit(1)
	}
}
