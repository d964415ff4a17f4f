// Cancel keys: the synthetic BackendKeyData a client gets instead of a server's.

package pgwire

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"sync/atomic"
)

// CancelKey is a backend key: the process id and secret a client uses to cancel.
type CancelKey struct {
	PID    uint32
	Secret []byte // 4 bytes for protocol 3.0
}

// SyntheticPIDBase is the smallest PID NewCancelKey gives: 2^22, one
// above the largest process ID Linux hands out (PID_MAX_LIMIT), so a
// synthetic PID never equals a PostgreSQL backend's on Linux and a proxy
// can give some clients their server's real PID beside synthetic ones.
const SyntheticPIDBase = 1 << 22

// syntheticPIDs counts the PIDs NewCancelKey gave, from a random start.
// The counter is 64 bits wide and starts below 2^63, so it never wraps
// (a 32-bit one would, and its wrap would repeat PIDs 2^23 keys apart).
var syntheticPIDs = func() *atomic.Uint64 {
	var b [8]byte
	rand.Read(b[:])
	n := new(atomic.Uint64)
	n.Store(binary.BigEndian.Uint64(b[:]) >> 1)
	return n
}()

// NewCancelKey returns a key: a PID from SyntheticPIDBase to 2^31-1
// (positive: clients read it as an int32) and a random 4-byte secret. The
// PIDs follow one another from a random start, so no two of the process's
// clients share one until about two billion keys later (random PIDs met
// twice among 10,000 clients about 2% of the time, and PIDs name clients
// in the console and in the servers' session tables). Only the secret has
// to be unguessable, as a PostgreSQL backend's PID is not secret either.
func NewCancelKey() CancelKey {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	pid := SyntheticPIDBase + uint32(syntheticPIDs.Add(1)%(1<<31-SyntheticPIDBase))
	return CancelKey{PID: pid, Secret: b[:]}
}

// Equal reports whether k and o are the same key, comparing the secrets in
// constant time.
func (k CancelKey) Equal(o CancelKey) bool {
	return k.PID == o.PID && subtle.ConstantTimeCompare(k.Secret, o.Secret) == 1
}
