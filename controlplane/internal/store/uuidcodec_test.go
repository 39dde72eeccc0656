package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// TestUUIDCodec round-trips google/uuid values through a store connection, alone, in arrays,
// NULL and as text, and checks that they take the binary path rather than driver.Valuer's text.
func TestUUIDCodec(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	tm := conn.Conn().TypeMap()
	if _, ok := tm.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, uuid.UUID{}).(store.EncodeUUIDPlan); !ok {
		t.Errorf("uuid.UUID is not encoded by the binary plan")
	}
	var dst uuid.UUID
	if _, ok := tm.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &dst).(store.ScanUUIDPlan); !ok {
		t.Errorf("*uuid.UUID is not scanned by the binary plan")
	}

	one, two := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	var (
		gotOne  uuid.UUID
		gotList []uuid.UUID
		gotNull *uuid.UUID
		gotPtr  *uuid.UUID
		text    string
	)
	err = conn.QueryRow(ctx, `SELECT $1::uuid, $2::uuid[], $3::uuid, $4::uuid, $1::uuid`, one, []uuid.UUID{one, two}, (*uuid.UUID)(nil), &two).
		Scan(&gotOne, &gotList, &gotNull, &gotPtr, &text)
	if err != nil {
		t.Fatal(err)
	}
	if gotOne != one || !slices.Equal(gotList, []uuid.UUID{one, two}) || gotNull != nil || gotPtr == nil || *gotPtr != two || text != one.String() {
		t.Errorf("round trip: %v %v %v %v %q", gotOne, gotList, gotNull, gotPtr, text)
	}
	// NULL leaves a uuid.UUID as it is, as uuid.UUID's sql.Scanner does.
	if err := conn.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&gotOne); err != nil || gotOne != one {
		t.Errorf("NULL scanned into a uuid.UUID: %v, %v", gotOne, err)
	}
}
