// Package pipe tunes pipes a process writes to.
package pipe
