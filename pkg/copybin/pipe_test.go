package copybin

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestPipeCopyTo streams a COPY through a Pipe into the decoder, as a
// snapshot reader does, and checks every row arrives.
func TestPipeCopyTo(t *testing.T) {
	conn := pgConn(t)
	p := NewPipe()
	go func() {
		_, err := conn.PgConn().CopyTo(context.Background(), p, "COPY (SELECT g, repeat('x', g % 100) FROM generate_series(1, 50000) g) TO STDOUT (FORMAT binary)")
		p.CloseWrite(err)
	}()
	cols := []Column{{Name: "g", TypeOID: pgtype.Int4OID}, {Name: "s", TypeOID: pgtype.TextOID}}
	var sum, rows int64
	n, err := decodeAll(p, cols, 4096, func(b *Batch) {
		for i := 0; i < b.Len; i++ {
			sum += b.Cols[0].Int[i]
			if len(b.Cols[1].Bytes(i)) != int(b.Cols[0].Int[i]%100) {
				t.Fatalf("row %d: text of %d bytes", b.Cols[0].Int[i], len(b.Cols[1].Bytes(i)))
			}
			rows++
		}
	})
	if err != nil || n != 50000 || rows != 50000 || sum != 50000*50001/2 {
		t.Fatalf("%d rows (%d seen), sum %d, err %v", n, rows, sum, err)
	}
}

// TestPipeCloseRead checks that a reader giving up unblocks the writer and
// that the writer's error reaches the reader.
func TestPipeCloseRead(t *testing.T) {
	p := NewPipe()
	stop := errors.New("stop")
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := p.Write(buf); err != nil {
				done <- err
				return
			}
		}
	}()
	if _, err := io.ReadFull(p, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	p.CloseRead(stop)
	if err := <-done; !errors.Is(err, stop) {
		t.Fatalf("writer got %v, want %v", err, stop)
	}

	p = NewPipe()
	p.Write([]byte("abc"))
	p.CloseWrite(stop)
	got, err := io.ReadAll(p)
	if string(got) != "abc" || !errors.Is(err, stop) {
		t.Fatalf("reader got %q, %v", got, err)
	}
}
