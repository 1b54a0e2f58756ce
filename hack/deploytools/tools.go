//go:build tools

// Package tools pins the commands the deployment tests render manifests with: helm (the chart in
// deploy/helm/raven) and kustomize (the kustomizations in deploy/).
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
	_ "sigs.k8s.io/kustomize/kustomize/v5"
)
