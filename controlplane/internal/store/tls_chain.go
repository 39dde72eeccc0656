package store

import "time"

// TLSChain is the certificate chain a check's attempt was served, as stored in
// check_results.details (key tls_chain): written by ingest, read back with the results.
type TLSChain struct {
	Host         string           `json:"host"`
	Verified     bool             `json:"verified"`
	Problem      string           `json:"problem,omitempty"` // why it does not verify
	Certificates []TLSCertificate `json:"certificates"`      // leaf first
}

// TLSCertificate is one certificate of a stored chain.
type TLSCertificate struct {
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer"`
	SANs      []string  `json:"sans"`
	NotBefore time.Time `json:"not_before"`
	NotAfter  time.Time `json:"not_after"`
	SHA256    string    `json:"sha256"`
}
