//go:build linux

// ring: the few io_uring calls the loop uses to hand a batch of writes to the kernel in one system call.

package netloop

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// io_uring's ABI (include/uapi/linux/io_uring.h); the system call numbers
// are the same on every architecture that has them.
const (
	sysIOURingSetup = 425
	sysIOURingEnter = 426

	iouringOffSQRing = 0
	iouringOffCQRing = 0x8000000
	iouringOffSQEs   = 0x10000000

	iouringFeatSingleMmap = 1 << 0
	iouringFeatNoDrop     = 1 << 1
	iouringSetupCQSize    = 1 << 3

	iouringOpSend        = 26
	iouringOpRecv        = 27
	iouringOpAsyncCancel = 14
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// sqe is struct io_uring_sqe (64 bytes).
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32
	userData uint64
	bufIndex uint16
	persona  uint16
	spliceIn int32
	addr3    uint64
	pad      uint64
}

// cqe is struct io_uring_cqe (16 bytes).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ring is one io_uring, used by one thread: the loop's.
type ring struct {
	fd             int
	ringMem        []byte // the SQ and CQ rings: one mapping (IORING_FEAT_SINGLE_MMAP)
	sqeMem         []byte
	sqHead, sqTail *uint32
	sqMask         uint32
	sqes           []sqe
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []cqe
	tail           uint32 // the next SQE to fill (ahead of *sqTail until submit)
}

// ErrNoRing is NewWith's error when the kernel has no io_uring for the
// loop (too old, disabled by kernel.io_uring_disabled, or refused by a
// seccomp filter, as Docker's default profile does).
var ErrNoRing = errors.New("netloop: io_uring unavailable")

func newRing(entries, cqEntries uint32) (*ring, error) {
	p := uringParams{flags: iouringSetupCQSize, cqEntries: cqEntries}
	fd, _, e := syscall.RawSyscall(sysIOURingSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %v", ErrNoRing, e)
	}
	r := &ring{fd: int(fd)}
	if p.features&iouringFeatSingleMmap == 0 || p.features&iouringFeatNoDrop == 0 {
		syscall.Close(r.fd)
		return nil, fmt.Errorf("%w: kernel older than 5.5", ErrNoRing)
	}
	sqSize := p.sqOff.array + p.sqEntries*4
	cqSize := p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{}))
	size := max(sqSize, cqSize)
	mem, err := syscall.Mmap(r.fd, iouringOffSQRing, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		syscall.Close(r.fd)
		return nil, fmt.Errorf("%w: mmap: %v", ErrNoRing, err)
	}
	r.ringMem = mem
	sqeMem, err := syscall.Mmap(r.fd, iouringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		syscall.Munmap(mem)
		syscall.Close(r.fd)
		return nil, fmt.Errorf("%w: mmap SQEs: %v", ErrNoRing, err)
	}
	r.sqeMem = sqeMem
	r.sqHead = (*uint32)(unsafe.Pointer(&mem[p.sqOff.head]))
	r.sqTail = (*uint32)(unsafe.Pointer(&mem[p.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&mem[p.sqOff.ringMask]))
	r.cqHead = (*uint32)(unsafe.Pointer(&mem[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&mem[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&mem[p.cqOff.ringMask]))
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&sqeMem[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries)
	// SQE i always sits in slot i of the index array: fill it once.
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[p.sqOff.array])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = atomic.LoadUint32(r.sqTail)
	return r, nil
}

func (r *ring) close() {
	syscall.Munmap(r.sqeMem)
	syscall.Munmap(r.ringMem)
	syscall.Close(r.fd)
}

// next returns the next free SQE, zeroed, or nil when the queue is full
// (submit first).
func (r *ring) next() *sqe {
	if r.tail-atomic.LoadUint32(r.sqHead) >= uint32(len(r.sqes)) {
		return nil
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s
}

// prepSend fills s to send p on fd. p must stay untouched until its
// completion.
func prepSend(s *sqe, fd int, p []byte, userData uint64) {
	prepIO(s, iouringOpSend, fd, p, syscall.MSG_NOSIGNAL, userData)
}

// prepRecv fills s to receive into p from fd without waiting
// (MSG_DONTWAIT: the completion comes in the submit, -EAGAIN when there
// was nothing).
func prepRecv(s *sqe, fd int, p []byte, userData uint64) {
	prepIO(s, iouringOpRecv, fd, p, syscall.MSG_DONTWAIT, userData)
}

func prepIO(s *sqe, op uint8, fd int, p []byte, flags uint32, userData uint64) {
	s.opcode = op
	s.fd = int32(fd)
	s.addr = uint64(uintptr(unsafe.Pointer(&p[0])))
	s.len = uint32(len(p))
	s.opFlags = flags
	s.userData = userData
}

// prepCancel fills s to cancel the request with userData.
func prepCancel(s *sqe, target, userData uint64) {
	s.opcode = iouringOpAsyncCancel
	s.fd = -1
	s.addr = target
	s.userData = userData
}

// submit hands every filled SQE to the kernel in one system call, which
// also runs the sends that can go at once; their completions are then
// in the CQ ring. It keeps trying while the kernel is busy.
func (r *ring) submit() error {
	atomic.StoreUint32(r.sqTail, r.tail)
	for {
		n := r.tail - atomic.LoadUint32(r.sqHead)
		if n == 0 {
			return nil
		}
		_, _, e := syscall.RawSyscall6(sysIOURingEnter, uintptr(r.fd), uintptr(n), 0, 0, 0, 0)
		switch e {
		case 0, syscall.EINTR:
		case syscall.EAGAIN, syscall.EBUSY:
			return e // the caller reaps completions and tries again
		default:
			return fmt.Errorf("netloop: io_uring_enter: %w", e)
		}
	}
}
