//go:build tools

// Package deps pins modules the project is built on before the code that
// uses them lands (toxiproxy: the faults package). `go mod tidy` keeps
// them because it considers every build tag.
package deps

import (
	_ "github.com/Shopify/toxiproxy/v2"
	_ "pgregory.net/rapid"
)
