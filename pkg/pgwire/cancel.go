// Cancel keys: the synthetic BackendKeyData a client gets instead of a server's.

package pgwire

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
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

// NewCancelKey returns a random key: a PID from SyntheticPIDBase to
// 2^31-1 (positive: clients read it as an int32) and a 4-byte secret.
func NewCancelKey() CancelKey {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	pid := SyntheticPIDBase + binary.BigEndian.Uint32(b[:4])%(1<<31-SyntheticPIDBase)
	return CancelKey{PID: pid, Secret: b[4:8:8]}
}

// Equal reports whether k and o are the same key, comparing the secrets in
// constant time.
func (k CancelKey) Equal(o CancelKey) bool {
	return k.PID == o.PID && subtle.ConstantTimeCompare(k.Secret, o.Secret) == 1
}
