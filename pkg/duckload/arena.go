// strArena: memory outside the Go heap for long strings of a data chunk.

package duckload

import (
	"fmt"
	"syscall"
	"unsafe"
)

// strArena holds the bytes of the non-inlined strings of one data chunk,
// so a string_t can point at them without a call into DuckDB per string.
// The memory comes from mmap, not the Go heap, so C may keep pointers to it
// (cgo forbids that for Go memory). The appender copies strings out of the
// chunk when it takes the chunk, after which the arena is reset.
type strArena struct {
	mem  []byte
	used int
}

// arenaSize is virtual; pages are only touched when used. A chunk whose
// long strings do not fit falls back to DuckDB's own string copy.
const arenaSize = 16 << 20

func newStrArena() (*strArena, error) {
	mem, err := syscall.Mmap(-1, 0, arenaSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("string arena: %w", err)
	}
	return &strArena{mem: mem}, nil
}

// put copies b into the arena and returns its address, or 0 when full.
func (a *strArena) put(b []byte) uintptr {
	if a == nil || len(a.mem)-a.used < len(b) {
		return 0
	}
	p := &a.mem[a.used]
	copy(a.mem[a.used:], b)
	a.used += len(b)
	return uintptr(unsafe.Pointer(p))
}

func (a *strArena) reset() {
	if a != nil {
		a.used = 0
	}
}

func (a *strArena) free() {
	if a != nil && a.mem != nil {
		syscall.Munmap(a.mem)
		a.mem = nil
	}
}
