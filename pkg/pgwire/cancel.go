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

// NewCancelKey returns a random key: a nonzero PID and a 4-byte secret.
func NewCancelKey() CancelKey {
	var b [8]byte
	for {
		rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
		if pid := binary.BigEndian.Uint32(b[:4]) &^ (1 << 31); pid != 0 {
			// PIDs stay positive: clients read them as int32.
			return CancelKey{PID: pid, Secret: b[4:8:8]}
		}
	}
}

// Equal reports whether k and o are the same key, comparing the secrets in
// constant time.
func (k CancelKey) Equal(o CancelKey) bool {
	return k.PID == o.PID && subtle.ConstantTimeCompare(k.Secret, o.Secret) == 1
}
