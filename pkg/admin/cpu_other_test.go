// Thread CPU time is measured on Linux only.

//go:build !linux

package admin

import "time"

const haveThreadCPU = false

func threadCPU() time.Duration { return 0 }
