package main

import "os/exec"

var execLookPath = exec.LookPath
