package stepcheck_test

import (
	"testing"

	"github.com/outboxcheck/outboxcheck/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
