// Hand-backs: why a session left the event loop for its goroutine, counted per reason.

package proxy

// backReason says why the loop handed a session back to its goroutine.
// Each hand-back and the park after it cost two thread wake-ups; a
// reason that grows with the traffic shows a client whose common case the
// loop does not serve (until 2026-12-04 a Flush was one).
type backReason uint8

const (
	backMessage    backReason = iota // a message type the loop leaves alone: Terminate, FunctionCall, COPY data; a bad length
	backLarge                        // a client message larger than the buffers
	backClientEnd                    // the client's end of stream, or a read error
	backServer                       // no idle server that fits: connect, health check, settings replay, pause, a fence mid-group
	backError                        // planning failed: the session ends with a protocol error
	backRelay                        // the answer needs the goroutine: pinned client, server not on the loop, a group not ended
	backLongAnswer                   // a server message larger than the buffers
	backCopy                         // COPY FROM STDIN
	backKept                         // a transaction left open by a pinned, ending or draining client
	backFailure                      // a server or client write or read failed
	backTimeout                      // acquire or client timeout
	backPanic                        // the session's code panicked on the loop
	backCancel                       // a cancel request ended the wait for a server (waitcancel.go)
	nBackReasons
)

var backReasonNames = [nBackReasons]string{"message", "large_message", "client_end", "server", "error",
	"relay", "long_answer", "copy", "kept", "failure", "timeout", "panic", "cancel"}

// LoopHandBacks returns, per reason, the times the event loop handed a
// session back to its goroutine.
func (p *Proxy) LoopHandBacks() map[string]int64 {
	m := make(map[string]int64, nBackReasons)
	for i := range p.handBacks {
		m[backReasonNames[i]] = p.handBacks[i].Load()
	}
	return m
}
