// Raw COPY TO STDOUT: the reader's socket read directly, CopyData framing stripped in place.

package snapshot

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// rawCopyBuffer is the socket read buffer. PostgreSQL sends one CopyData
// message per row; a large buffer lets one Read of the decoder gather
// thousands of them with one system call.
const rawCopyBuffer = 1 << 20

// maxControlMessage bounds the body of a message other than CopyData
// (errors, notices, CommandComplete), so that a corrupt length cannot make
// us allocate without limit.
const maxControlMessage = 64 << 20

// Read coalescing. When the decoder is faster than the server, every socket
// read finds only the one 8 KB send PostgreSQL just made and costs a system
// call, a poller wake-up and a thread switch. After a read shorter than
// rawCoalesceBelow, the next one first waits rawCoalesceWait so that it
// finds many sends at once. This never caps the throughput: the kernel's
// receive buffer (at least 128 KB on Linux) holds what arrives meanwhile,
// and once the server is faster than the decoder the reads are long and
// nothing waits. A zero wait turns it off (tests compare both).
var (
	rawCoalesceBelow = 32 << 10
	rawCoalesceWait  = time.Millisecond
)

// rawConn runs COPY ... TO STDOUT statements on a reader connection by
// speaking the simple query protocol on its socket itself, without pgx's
// per-message work (a Receive and a Write into a copybin.Pipe per row, the
// Pipe's copy and its goroutine hand-offs). Between statements the connection is idle and in the
// same state as if pgx had run them, so the *pgx.Conn still serves later
// queries (Verify checksums on the reader connections). The connection is
// not hijacked for that reason; it is borrowed: pgx must not be used while
// a rawConn reads, and everything pgx had buffered is drained first
// (SyncConn).
//
// Any failure inside a statement (server error, cancellation, decoder
// giving up) closes the connection: its transaction is then aborted or the
// protocol is mid-message, so nothing more can be read in the snapshot.
//
// rawConn is the io.Reader of the current statement's COPY data; Read
// returns io.EOF after CopyDone, CommandComplete and ReadyForQuery.
type rawConn struct {
	conn *pgconn.PgConn
	nc   net.Conn
	src  *sockReader // what br reads
	br   *bufio.Reader

	left   int   // payload bytes of the current CopyData message not yet read
	ended  bool  // the statement has been read up to ReadyForQuery
	rows   int64 // the row count of the last CommandComplete
	err    error // sticky failure of the current statement
	broken bool  // the connection was closed after a failure
}

// newRawConn borrows conn's socket. conn must be idle.
func newRawConn(ctx context.Context, conn *pgconn.PgConn) (*rawConn, error) {
	if err := conn.SyncConn(ctx); err != nil {
		return nil, err
	}
	nc := conn.Conn()
	src := &sockReader{nc: nc, last: rawCopyBuffer}
	return &rawConn{conn: conn, nc: nc, src: src, br: bufio.NewReaderSize(src, rawCopyBuffer), ended: true}, nil
}

// sockReader remembers the size of the last socket read, for pause.
type sockReader struct {
	nc   net.Conn
	last int
}

func (s *sockReader) Read(p []byte) (int, error) {
	n, err := s.nc.Read(p)
	s.last = n
	return n, err
}

// pause is called before a read that has to wait for the socket; see
// rawCoalesceWait.
func (rc *rawConn) pause() {
	if rawCoalesceWait > 0 && rc.src.last < rawCoalesceBelow {
		time.Sleep(rawCoalesceWait)
	}
}

// watch makes a cancellation of ctx unblock every read and write on the
// socket at once. The returned stop reports whether ctx was left alone; if
// not, the socket's deadline is (or is about to be) in the past and the
// connection must be closed.
func (rc *rawConn) watch(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() { rc.nc.SetDeadline(time.Unix(1, 0)) })
}

// close ends the connection after a failure. The deadline goes first so
// that pgx's Terminate cannot block behind a full send buffer.
func (rc *rawConn) close() {
	if rc.broken {
		return
	}
	rc.broken = true
	rc.nc.SetDeadline(time.Unix(1, 0))
	rc.conn.Close(context.Background())
}

// start sends query, which must be a COPY ... TO STDOUT (FORMAT binary),
// and reads up to its CopyOutResponse.
func (rc *rawConn) start(query string) error {
	if rc.broken {
		return errors.New("reader connection closed after an earlier failure")
	}
	if !rc.ended {
		return errors.New("previous COPY not read to its end")
	}
	rc.left, rc.ended, rc.rows, rc.err = 0, false, -1, nil
	msg := make([]byte, 5, 6+len(query))
	msg[0] = 'Q'
	binary.BigEndian.PutUint32(msg[1:], uint32(4+len(query)+1))
	msg = append(append(msg, query...), 0)
	if _, err := rc.nc.Write(msg); err != nil {
		return rc.fail(err)
	}
	for {
		typ, body, err := rc.message()
		if err != nil {
			return rc.fail(err)
		}
		switch typ {
		case 'H': // CopyOutResponse: overall format, column count, formats
			if len(body) < 1 || body[0] != 1 {
				return rc.fail(errors.New("protocol: COPY did not start a binary stream"))
			}
			return nil
		case 'E':
			return rc.fail(serverError(body))
		case 'N', 'S', 'A':
		default:
			return rc.fail(fmt.Errorf("protocol: unexpected message %q before CopyOutResponse", typ))
		}
	}
}

// Read reads the payloads of the CopyData messages as one stream.
func (rc *rawConn) Read(p []byte) (int, error) {
	if rc.err != nil {
		return 0, rc.err
	}
	if rc.ended {
		return 0, io.EOF
	}
	for len(p) > 0 {
		n, parsed := rc.take(p)
		if n > 0 {
			return n, nil
		}
		if parsed {
			continue // only empty CopyData messages were buffered
		}
		if rc.left > 0 || rc.br.Buffered() < 5 {
			rc.pause()
		}
		if rc.left > 0 {
			if _, err := rc.br.Peek(1); err != nil { // wait for more payload
				return 0, rc.fail(err)
			}
			continue
		}
		hdr, err := rc.br.Peek(5)
		if err != nil {
			return 0, rc.fail(err)
		}
		if hdr[0] == 'd' {
			if binary.BigEndian.Uint32(hdr[1:]) < 4 {
				return 0, rc.fail(errors.New("protocol: CopyData length below 4"))
			}
			continue // take parses it
		}
		typ, body, err := rc.message()
		if err != nil {
			return 0, rc.fail(err)
		}
		switch typ {
		case 'c': // CopyDone
			if err := rc.finish(); err != nil {
				return 0, rc.fail(err)
			}
			return 0, io.EOF
		case 'E':
			return 0, rc.fail(serverError(body))
		case 'N', 'S', 'A':
		default:
			return 0, rc.fail(fmt.Errorf("protocol: unexpected message %q in COPY data", typ))
		}
	}
	return 0, nil
}

// take copies into p the CopyData payloads already buffered, stripping
// their headers, without blocking. parsed reports whether it consumed any
// header even if it copied nothing.
func (rc *rawConn) take(p []byte) (n int, parsed bool) {
	buf, _ := rc.br.Peek(rc.br.Buffered())
	i := 0
	for n < len(p) {
		if rc.left == 0 {
			if len(buf)-i < 5 || buf[i] != 'd' {
				break
			}
			l := binary.BigEndian.Uint32(buf[i+1:])
			if l < 4 {
				break // Read reports it
			}
			rc.left = int(l - 4)
			i += 5
			parsed = true
			continue
		}
		k := copy(p[n:], buf[i:min(len(buf), i+rc.left)])
		if k == 0 {
			break
		}
		n += k
		i += k
		rc.left -= k
	}
	rc.br.Discard(i)
	return n, parsed
}

// finish reads from CopyDone to ReadyForQuery, keeping the row count, and
// checks that the transaction is still open.
func (rc *rawConn) finish() error {
	for {
		typ, body, err := rc.message()
		if err != nil {
			return err
		}
		switch typ {
		case 'C': // CommandComplete "COPY n"
			tag := strings.TrimSuffix(string(body), "\x00")
			if n, ok := strings.CutPrefix(tag, "COPY "); ok {
				rc.rows, _ = strconv.ParseInt(n, 10, 64)
			}
		case 'Z':
			if len(body) != 1 || body[0] != 'T' {
				return fmt.Errorf("transaction status %q after COPY, want in transaction", body)
			}
			rc.ended = true
			return nil
		case 'E':
			return serverError(body)
		case 'N', 'S', 'A':
		default:
			return fmt.Errorf("protocol: unexpected message %q after CopyDone", typ)
		}
	}
}

// drain reads what is left of the COPY data after the decoder saw the
// trailer, which should be nothing but the closing messages.
func (rc *rawConn) drain() error {
	var scratch [512]byte
	extra := 0
	for {
		n, err := rc.Read(scratch[:])
		extra += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if extra > 0 {
		return fmt.Errorf("%d bytes after the COPY BINARY trailer", extra)
	}
	return nil
}

// message reads one whole message other than CopyData payloads the caller
// wants. The body is valid until the next read; it is nil for CopyData,
// notices, parameter changes and notifications, which are skipped.
func (rc *rawConn) message() (byte, []byte, error) {
	hdr, err := rc.br.Peek(5)
	if err != nil {
		return 0, nil, err
	}
	typ := hdr[0]
	l := int(binary.BigEndian.Uint32(hdr[1:])) - 4
	if l < 0 || (l > maxControlMessage && typ != 'd') {
		return 0, nil, fmt.Errorf("protocol: message %q of length %d", typ, l+4)
	}
	rc.br.Discard(5)
	switch {
	case typ == 'd' || typ == 'N' || typ == 'S' || typ == 'A':
		_, err := rc.br.Discard(l)
		return typ, nil, err
	case l <= rc.br.Size():
		body, err := rc.br.Peek(l)
		if err != nil {
			return 0, nil, err
		}
		rc.br.Discard(l)
		return typ, body, nil
	default:
		body := make([]byte, l)
		_, err := io.ReadFull(rc.br, body)
		return typ, body, err
	}
}

// fail makes err the statement's sticky error and closes the connection.
func (rc *rawConn) fail(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if rc.err == nil {
		rc.err = err
	}
	rc.close()
	return rc.err
}

// serverError turns an ErrorResponse body into a *pgconn.PgError.
func serverError(body []byte) error {
	var msg pgproto3.ErrorResponse
	if err := msg.Decode(body); err != nil {
		return fmt.Errorf("protocol: malformed ErrorResponse: %w", err)
	}
	return pgconn.ErrorResponseToPgError(&msg)
}
