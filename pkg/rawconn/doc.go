// Package rawconn reads and writes a socket with raw system calls, so that
// a proxy's many short socket calls do not let the Go scheduler hand its
// processor to another thread.
//
// The net package makes each read and write a blocking-style system call:
// the goroutine's processor is marked as in a system call, and the
// runtime's monitor thread hands it to another OS thread when the call is
// still running at its next tick (20 µs and up). A write to a loopback or
// LAN socket runs the receiver's network stack inline and often takes
// longer than that on a virtual machine; each hand-off then wakes a thread
// and, when the call returns, puts one back to sleep: two context switches
// for nothing, because the socket is non-blocking and the call never waits.
// Conn makes the same calls with syscall.RawSyscall, which the scheduler
// does not watch, and still waits for readiness (and honours deadlines)
// through the runtime's network poller, by way of syscall.RawConn.
package rawconn
