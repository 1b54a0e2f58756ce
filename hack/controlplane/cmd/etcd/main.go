// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 at the
// version kube-apiserver's own etcd client is pinned to, so the test control
// plane runs the etcd release its apiserver was tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
