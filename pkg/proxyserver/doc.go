// Package proxyserver runs qprouter's pooling proxy from its settings: it
// reads the auth file and TLS certificate, builds the pools (pkg/pool,
// pkg/route), the proxy (pkg/proxy) and the admin API and metrics
// (pkg/admin, adapted here so pkg/admin need not import pkg/proxy), serves
// until its context ends, reloads on request and drains. Config is every
// setting; the command line that fills it lives in tools/qprouter.
package proxyserver
