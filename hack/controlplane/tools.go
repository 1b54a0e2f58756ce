//go:build tools

// Package tools pins the Kubernetes commands the test control plane is built from.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
