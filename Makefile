# Roastery: `make run` serves on SQLite with a demo account; `make test` runs every test.

PG_URL ?= postgres://postgres@127.0.0.1:5432/test

.PHONY: run demo test test-pg lint fmt smoke deny release bench bench-quick bench-eudr

## Build and serve on https://127.0.0.1:8443 with an embedded SQLite database (roastery.db),
## printing a fresh demo account's client id and secret first.
run: release
	./target/release/roastery accounts create --name demo
	./target/release/roastery serve

## The same with the demo data set loaded (roastery seed demo) into a fresh SQLite database,
## demo.db, so the first listing is not empty: prints a new account, then serves.
DEMO_DB ?= demo.db
demo: release
	rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	ROASTERY_DATABASE_URL=sqlite://$(DEMO_DB) ./target/release/roastery seed demo
	ROASTERY_DATABASE_URL=sqlite://$(DEMO_DB) ./target/release/roastery accounts create --name demo
	ROASTERY_DATABASE_URL=sqlite://$(DEMO_DB) ./target/release/roastery serve

release:
	cargo build --release --locked -p roastery-server

## Every test: domain, use cases, adapters and end to end over HTTPS. End-to-end tests run on
## SQLite always and on PostgreSQL when one answers at 127.0.0.1:5432 (or ROASTERY_TEST_DATABASE_URL).
test:
	@if [ -z "$$ROASTERY_TEST_DATABASE_URL" ] && command -v pg_isready >/dev/null 2>&1 \
	    && pg_isready -q -h 127.0.0.1 -p 5432; then \
	  export ROASTERY_TEST_DATABASE_URL=$(PG_URL); \
	fi; \
	if [ -z "$$ROASTERY_TEST_DATABASE_URL" ]; then \
	  echo "note: no PostgreSQL at 127.0.0.1:5432; PostgreSQL variants will say they are skipped"; \
	fi; \
	cargo test --workspace --locked

## The same tests with PostgreSQL required.
test-pg:
	ROASTERY_TEST_DATABASE_URL=$${ROASTERY_TEST_DATABASE_URL:-$(PG_URL)} cargo test --workspace --locked

lint:
	cargo clippy --workspace --all-targets --locked -- -D warnings

fmt:
	cargo fmt --all --check

## The outside-in acceptance check against the release binary.
smoke: release
	python3 ../shared/acceptance/smoke.py --binary "$(CURDIR)/target/release/roastery"

## Licences, bans and sources (needs `cargo install cargo-deny`).
deny:
	cargo deny check licenses bans sources

## Load benchmark: seeds 100,000 green lots on SQLite and on PostgreSQL (a throw-away database),
## drives each scenario with wrk beside the bare actix-web + rustls server, and rewrites the table
## of targets (each met or missed) and the table of scenarios in docs/performance.md. Needs wrk
## (apt-get install -y wrk). `make bench-quick`: 5,000 lots, 3 s, both tables printed only.
bench:
	cargo build --release --locked -p roastery-server -p roastery-bench-bare
	python3 benches/bench.py
	$(MAKE) bench-eudr

## EUDR client: 1,000 statements verified against a local stub EU service at the client's limit
## of 5 calls/s (about 200 s of wall time, little CPU); prints the rate and the busiest second.
bench-eudr:
	cargo test -q -p roastery-adapters-http --test eudr_client -- --ignored --nocapture bench_verify

bench-quick:
	cargo build --release --locked -p roastery-server -p roastery-bench-bare
	python3 benches/bench.py --quick --no-write
