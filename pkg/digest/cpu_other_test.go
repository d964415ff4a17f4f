// Thread CPU time is measured on Linux only.

//go:build !linux

package digest

import "time"

const haveThreadCPU = false

func threadCPU() time.Duration { return 0 }
