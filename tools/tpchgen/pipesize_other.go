//go:build !linux

// Pipe sizes are left alone outside Linux.

package main

import "os"

func growPipe(*os.File) {}
