module github.com/qpkit/qpkit/tools/qprouter

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/qpkit/qpkit/pkg v0.0.0
)

require (
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	golang.org/x/sync v0.23.0 // indirect
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/ini.v1 v1.68.0 // indirect
)

replace github.com/qpkit/qpkit/pkg => ../../pkg
