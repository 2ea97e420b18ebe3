package faults_test

import (
	"testing"

	"github.com/outboxcheck/outboxcheck/pgscratch"
)

func TestMain(m *testing.M) { pgscratch.Main(m) }
