package store

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The generated queries take and return google/uuid values. pgx knows them only as a
// driver.Valuer and an sql.Scanner, both of which go through the 36-character text form: on the
// result pipeline that costs more than the rest of a batch's encoding together. registerUUID
// teaches each connection the 16-byte binary form instead, for uuid and uuid[] alike.

// registerUUID replaces the connection's uuid and uuid[] types with ones that encode and decode
// uuid.UUID directly. It is the pool's AfterConnect.
func registerUUID(conn *pgx.Conn) {
	tm := conn.TypeMap()
	elem := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	tm.RegisterType(elem)
	tm.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: elem}})
}

// uuidCodec is pgtype.UUIDCodec plus the binary form of uuid.UUID; every other value and the
// text format are left to pgtype.UUIDCodec.
type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return encodeUUID{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return scanUUID{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeUUID struct{}

func (encodeUUID) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID)
	return append(buf, u[:]...), nil
}

type scanUUID struct{}

// Scan leaves dst as it is on NULL, as uuid.UUID's own sql.Scanner, which pgx used before, does.
func (scanUUID) Scan(src []byte, dst any) error {
	if src == nil {
		return nil
	}
	if len(src) != len(uuid.UUID{}) {
		return fmt.Errorf("invalid length for uuid: %d", len(src))
	}
	copy(dst.(*uuid.UUID)[:], src)
	return nil
}
