// Writing the copy beside the target and replacing the target atomically.

package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// tempPath names a fresh file next to target, in the same directory so
// that the final rename stays on one file system and is atomic.
func tempPath(target string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random temp name: %w", err)
	}
	return target + ".tmp-" + hex.EncodeToString(b[:]), nil
}

// removeDuckDBFiles removes a DuckDB database file and its write-ahead log.
func removeDuckDBFiles(path string) {
	os.Remove(path)
	os.Remove(path + ".wal")
}

// replaceTarget makes the finished, closed and checkpointed database file
// tmp the target: it syncs tmp, drops a stale target.wal (a write-ahead log
// left by a crashed writer of the old copy would otherwise be replayed
// onto the new file), renames tmp over target and syncs the directory so
// the rename survives a crash. Readers that still have the old file open
// keep reading the old copy until they reopen.
func replaceTarget(tmp, target string) error {
	if _, err := os.Stat(tmp + ".wal"); err == nil {
		return fmt.Errorf("%s.wal still exists after checkpoint and close", tmp)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Remove(target + ".wal"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove stale %s.wal: %w", target, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("replace %s: %w", target, err)
	}
	return syncFile(filepath.Dir(target))
}

// syncFile fsyncs a file or directory.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
