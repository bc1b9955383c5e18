/**
 * Two small Go programs a real node needs and no registry or package provides here, built with the
 * node's binaries (node-binaries.ts).
 */

/**
 * The sandbox program of the pause image. Like Kubernetes' own pause it holds the pod's namespaces,
 * reaps the zombies that end up with it, and exits 0 on SIGINT or SIGTERM.
 */
export const pauseSource = `// Command pause holds a pod sandbox's namespaces until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
`;

/**
 * A TCP relay from the \`kubernetes\` Service's address to kube-apiserver on loopback: there is no
 * kube-proxy, and pods on the bridge network cannot reach the host's 127.0.0.1. TLS passes through
 * untouched; the serving certificate already names the Service IP. Exits 0 on SIGTERM.
 */
export const serviceProxySource = `// Command service-proxy relays TCP connections from one address to another.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: service-proxy <listen host:port> <target host:port>")
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("relaying %s to %s\\n", os.Args[1], os.Args[2])
	go func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
		<-signals
		os.Exit(0)
	}()
	for {
		client, err := listener.Accept()
		if err != nil {
			continue
		}
		go relay(client, os.Args[2])
	}
}

func relay(client net.Conn, target string) {
	defer client.Close()
	server, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(server, client); done <- struct{}{} }()
	go func() { io.Copy(client, server); done <- struct{}{} }()
	<-done
}
`;
