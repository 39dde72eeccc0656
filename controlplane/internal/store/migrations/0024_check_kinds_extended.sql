-- Vantage schema: the extension check kinds. MULTISTEP runs a Playwright Test file that uses
-- only the request fixture, without a browser; PING sends ICMP echoes; GRPC asks the standard
-- grpc.health.v1 service; WEBSOCKET opens a socket and may exchange a message. Their settings
-- live in checks.spec like every kind's.
ALTER TABLE checks DROP CONSTRAINT checks_kind_check;
ALTER TABLE checks ADD CONSTRAINT checks_kind_check
    CHECK (kind IN ('UPTIME', 'BROWSER', 'DNS', 'TCP', 'MULTISTEP', 'PING', 'GRPC', 'WEBSOCKET'));
