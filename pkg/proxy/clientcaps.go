// Client caps per database and per user (PgBouncer's max_db_client_connections, max_user_client_connections).

package proxy

import "fmt"

// clientCounts are the clients connected per database and per user,
// under Proxy.mu.
type clientCounts struct {
	byDB, byUser map[string]int
}

// join counts a client of (db, user) unless that would put either over its
// cap (0: none); the refusal names the cap.
func (cc *clientCounts) join(db, user string, maxDB, maxUser int) string {
	if cc.byDB == nil {
		cc.byDB, cc.byUser = make(map[string]int), make(map[string]int)
	}
	if maxDB > 0 && cc.byDB[db] >= maxDB {
		return fmt.Sprintf("qprouter: too many clients of database %q (max_db_client_connections %d)", db, maxDB)
	}
	if maxUser > 0 && cc.byUser[user] >= maxUser {
		return fmt.Sprintf("qprouter: too many clients of user %q (max_user_client_connections %d)", user, maxUser)
	}
	cc.byDB[db]++
	cc.byUser[user]++
	return ""
}

// leave forgets a client join counted.
func (cc *clientCounts) leave(db, user string) {
	if cc.byDB[db]--; cc.byDB[db] <= 0 {
		delete(cc.byDB, db)
	}
	if cc.byUser[user]--; cc.byUser[user] <= 0 {
		delete(cc.byUser, user)
	}
}
