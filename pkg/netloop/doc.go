// Package netloop is a socket poller for a proxy's hot path: one OS
// thread waits on its own epoll for every adopted socket and hands
// readiness either to a Handler running on that thread (no goroutine
// wakes up) or to the goroutine blocked in the socket's Read or Write.
//
// Go's poller wakes one goroutine per ready socket; a pooling proxy then
// pays two goroutine wake-ups and their context switches per
// transaction, where an event loop such as PgBouncer's pays none. A
// socket must be polled by one of the two only: the kernel reports
// readiness to every epoll a socket is registered with, so Adopt takes
// the descriptor out of the runtime's poller.
package netloop
