// Choosing the unprivileged account that runs the server when we are root.

package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// account is who runs initdb, pg_ctl and postgres; nil cred means "as the
// current user".
type account struct {
	name string
	uid  int
	gid  int
	cred *syscall.Credential
}

// serverAccount returns the current user when it is not root, and otherwise
// the "postgres" user (falling back to "nobody"), because PostgreSQL refuses
// to run as root.
func serverAccount() (account, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		name := "current user"
		if err == nil {
			name = u.Username
		}
		return account{name: name, uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	var lastErr error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			lastErr = err
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			lastErr = fmt.Errorf("user %s has a non-numeric uid or gid", name)
			continue
		}
		return account{name: name, uid: uid, gid: gid, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}, nil
	}
	return account{}, fmt.Errorf("running as root and no unprivileged user (postgres, nobody) to run the server as: %w", lastErr)
}

// command builds an exec.Cmd that runs as the account, in its own process
// group so a Ctrl-C aimed at the caller's terminal does not reach it.
func (a account) command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: a.cred}
	return cmd
}

// give hands a path to the account so the server may write it.
func (a account) give(path string) error {
	if a.cred == nil {
		return nil
	}
	if err := os.Chown(path, a.uid, a.gid); err != nil {
		return fmt.Errorf("give %s to user %s: %w", path, a.name, err)
	}
	return nil
}
