// A file copy of the text pool that later processes map instead of rebuilding.

package tpch

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Building the pool costs about 0.8 CPU-seconds; a loader that runs one
// tpchgen per table part pays it a dozen times. With a cache file the first
// process writes the pool once and every later one maps it read-only, which
// costs page faults only for the pages it touches.

var (
	poolCacheMu   sync.Mutex
	poolCachePath string
)

// SetTextPoolCache makes the process read the text pool from path, or
// build it and write it there when path is missing or stale. Call it before
// the first NewGenerator; "" (the default) means no cache file. The file is
// 300 MiB: put it on tmpfs (/dev/shm) and delete it when done.
func SetTextPoolCache(path string) {
	poolCacheMu.Lock()
	poolCachePath = path
	poolCacheMu.Unlock()
}

func textPoolCache() string {
	poolCacheMu.Lock()
	defer poolCacheMu.Unlock()
	return poolCachePath
}

// poolFileMagic starts a cache file; the next 32 bytes are the sha256 of
// the embedded dists.dss, from which the pool is generated, so a file made
// by a build with other distributions is never used.
const poolFileMagic = "tpchgen text pool v1\n"

func poolFileHeader() []byte {
	h := []byte(poolFileMagic)
	sum := sha256.Sum256([]byte(distsDSS))
	h = append(h, sum[:]...)
	return binary.LittleEndian.AppendUint64(h, textPoolSize)
}

// errStalePool marks a cache file that exists but was not made for this
// build; it is rebuilt.
var errStalePool = errors.New("text pool cache is stale")

// readPoolFile maps a cache file and checks its header and its first bytes
// against a freshly generated prefix.
func readPoolFile(path string, g *textGrammar) (*textPool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hdr := poolFileHeader()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != int64(len(hdr))+textPoolSize {
		return nil, errStalePool
	}
	m, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, err
	}
	const probe = 64 << 10
	want := make([]byte, probe+poolSlack)
	fillText(g, want, probe)
	if !bytes.Equal(m[:len(hdr)], hdr) || !bytes.Equal(m[len(hdr):len(hdr)+probe], want[:probe]) {
		unmapFile(m)
		return nil, errStalePool
	}
	buf := m[len(hdr):]
	return &textPool{buf: buf[:textPoolSize:textPoolSize]}, nil
}

// writePoolFile stores the pool's logical bytes atomically (temp file and
// rename), so a concurrent reader sees either no file or a whole one.
func writePoolFile(path string, p *textPool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("text pool cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(poolFileHeader()); err != nil {
		tmp.Close()
		return fmt.Errorf("text pool cache: %w", err)
	}
	// Between two segment starts the logical bytes are contiguous in buf.
	bounds := append(append([]int64{0}, p.starts...), textPoolSize)
	for i := 0; i+1 < len(bounds); i++ {
		if _, err := tmp.Write(p.slice(bounds[i], bounds[i+1]-bounds[i])); err != nil {
			tmp.Close()
			return fmt.Errorf("text pool cache: %w", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("text pool cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("text pool cache: %w", err)
	}
	return nil
}
