-- A check's kind-specific configuration becomes one document: checks.spec holds the canonical
-- encoding of the check model (pkg/check Document: the fields of the kind's specification by
-- their API names, the assertions and the runtime version), so that adding a field to a kind
-- needs no schema change. The columns other code filters and joins on stay columns; url stays
-- readable (search, alert payloads) as a column generated from the document. The Basic-auth
-- password stays sealed in auth_password_enc: secrets are never in the document.

ALTER TABLE checks ADD COLUMN spec jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(spec) = 'object');

-- NULL columns become absent keys, which read as the kind's default (check.LoadDocument), as
-- the NULL columns did.
UPDATE checks SET spec = jsonb_strip_nulls(CASE kind
    WHEN 'DNS' THEN jsonb_build_object(
        'dns_domain', dns_domain, 'dns_record_type', dns_record_type,
        'dns_resolver', dns_resolver, 'dns_protocol', dns_protocol)
    WHEN 'TCP' THEN jsonb_build_object(
        'tcp_hostname', tcp_hostname, 'tcp_port', tcp_port, 'tcp_ip_family', tcp_ip_family,
        'tcp_data', tcp_data, 'tcp_should_fail', tcp_should_fail)
    ELSE jsonb_build_object(
        'url', url, 'text_to_search_for', text_to_search_for, 'headers', headers, 'method', method,
        'body', body, 'follow_redirects', follow_redirects, 'verify_ssl', verify_ssl,
        'auth_username', auth_username, 'script', script)
    END || jsonb_build_object('version', version, 'assertions', assertions));

ALTER TABLE checks
    DROP COLUMN url,
    DROP COLUMN version,
    DROP COLUMN method,
    DROP COLUMN headers,
    DROP COLUMN body,
    DROP COLUMN text_to_search_for,
    DROP COLUMN verify_ssl,
    DROP COLUMN follow_redirects,
    DROP COLUMN auth_username,
    DROP COLUMN script,
    DROP COLUMN dns_domain,
    DROP COLUMN dns_record_type,
    DROP COLUMN dns_resolver,
    DROP COLUMN dns_protocol,
    DROP COLUMN tcp_hostname,
    DROP COLUMN tcp_port,
    DROP COLUMN tcp_ip_family,
    DROP COLUMN tcp_data,
    DROP COLUMN tcp_should_fail,
    DROP COLUMN assertions;

ALTER TABLE checks ADD COLUMN url text GENERATED ALWAYS AS (spec ->> 'url') STORED;
