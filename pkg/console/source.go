package console

import "time"

// Source is what the console reports and controls. Every function is
// required.
type Source struct {
	Pools     func() []Pool
	Clients   func() []Client
	Servers   func() []Server
	Databases func() []Database
	Users     func() []User
	Config    func() []Setting
	Stats     func() []Stats
	// Paused reports whether every pool is paused (PAUSE without a
	// database).
	Paused func() bool
	// Pause stops handing out server connections to the pools of database
	// ("" every pool); Resume undoes it. An unknown database is an error
	// naming it.
	Pause, Resume func(database string) error
	// PauseUndoable, when set, is Pause for the PAUSE command, with a
	// function that undoes only that pause: a PAUSE cancelled while it
	// waits calls it, where it would otherwise call Resume (which also
	// resumes what other commands paused).
	PauseUndoable func(database string) (undo func(), err error)
	// Disable makes database refuse new clients; Enable undoes it.
	Disable, Enable func(database string) error
	// Kill pauses database and closes its clients and server connections
	// at once.
	Kill func(database string) error
	// KillClient closes the client with Client.ID id and its server
	// connection at once; an unknown id is an error naming it.
	KillClient func(id uint32) error
	// Reconnect closes the server connections of database ("" every
	// database): the idle ones now, the others when they come back.
	Reconnect func(database string) error
	// Disconnect closes the idle server connections of the database's
	// pools ("" all) without opening others; PAUSE calls it once no server
	// connection is handed out. Nil: PAUSE only waits.
	Disconnect func(database string)
	// Reload rereads the settings and files.
	Reload func() error
	// Set changes one setting in place (SET key = value); an error names
	// what is wrong with it.
	Set func(key, value string) error
	// Shutdown starts a graceful shutdown; it does not wait for it.
	Shutdown func()
}

// Pool is one (database, user) pool (SHOW POOLS).
type Pool struct {
	Database, User                string
	ClientsActive, ClientsWaiting int
	ServersActive, ServersIdle    int
	MaxWait                       time.Duration
	Mode                          string
	Paused                        bool // held by a PAUSE (the console's own pool never is)
}

// Client is one client connection (SHOW CLIENTS).
type Client struct {
	ID              uint32 // unique among clients; shown as ptr
	User, Database  string
	State           string // "active" or "waiting"
	Addr, LocalAddr string // host:port; "" unknown (a Unix socket)
	ConnectTime     time.Time
	RequestTime     time.Time     // its last request; zero: ConnectTime (SHOW CLIENTS never has NULL there)
	ServerPID       uint32        // the server connection linked to it; 0 none
	Wait            time.Duration // how long it has waited for a server so far (0 when not waiting)
	TLS             bool
	ApplicationName string
}

// Server is one server connection (SHOW SERVERS).
type Server struct {
	PID             uint32
	User, Database  string
	State           string // "active" or "idle"
	Addr, LocalAddr string
	ConnectTime     time.Time
	RequestTime     time.Time // when it last went back to its pool
	ClientID        uint32    // the linked client's Client.ID; 0 none
	CloseNeeded     bool      // closes when it comes back (RECONNECT)
}

// Database is one database entry (SHOW DATABASES).
type Database struct {
	Name, Host     string
	Port           int
	Database       string
	ForceUser      string
	PoolSize       int
	MinPoolSize    int
	ReservePool    int
	PoolMode       string // "" the default
	MaxConnections int
	Connections    int
	Paused         bool
	Disabled       bool
}

// User is one user with settings of its own (SHOW USERS).
type User struct {
	Name, PoolMode string
}

// Setting is one configuration key (SHOW CONFIG).
type Setting struct {
	Key, Value, Default string
	Changeable          bool // a reload applies it
}

// Stats are one database's counters since the start (SHOW STATS). A
// negative value is one not measured (NULL).
type Stats struct {
	Database                   string
	Transactions, Queries      int64
	Received, Sent             int64 // bytes
	TransactionTime, QueryTime time.Duration
	WaitTime                   time.Duration
	// The rates of the last complete period (PgBouncer's stats_period):
	// per second for the counts and bytes, per transaction or query for
	// the times, per transaction... for waits.
	Averages Averages
}

// Averages are the per-second rates and per-event times of a period.
type Averages struct {
	Transactions, Queries, Received, Sent int64
	TransactionTime, QueryTime, WaitTime  time.Duration
}
