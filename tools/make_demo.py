"""Build ``demo.jsonl`` and ``records.jsonl``, the bundled example that ``graphmem demo`` imports.

The example is the memory of a small engineering team from January 2025 to
October 2026: twelve projects, the tools they use and switch between, the
people who own them, the decisions behind the switches, and a little noise
(one assertion recorded by mistake and retracted, one priority recorded two
different ways, some assertions without sources, some recorded weeks late).

It writes graphmem/examples/demo.jsonl and records.jsonl, the data files the
package ships; ``--check`` writes nothing and exits 1 if they differ from what it
builds. Run it from anywhere:

    python tools/make_demo.py [--check]

The script is deterministic (no clock, no randomness: record times come from
the order of the statements and a CRC of the day) and it refuses to write
unless every line obeys the default ontology and predicate registry, the
record-time rules of the import format, and the story checks at the end.
``fact:N`` numbers are computed here, never written by hand: every ``assert``
and ``end`` line takes the next number in file order, so the retraction can
name its target by a key.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
import zlib
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent / "graphmem"
ONTOLOGY = PACKAGE / "ontology" / "default.toml"
PREDICATES = PACKAGE / "predicates" / "default.toml"
EXAMPLES = PACKAGE / "examples"
OUT = EXAMPLES / "demo.jsonl"

Line = dict[str, Any]  # a JSON line of the example, or a statement or record being built

UTC = UTC
# Nothing in the example may be recorded at or after this instant.
CUTOFF = datetime(2026, 11, 1, tzinfo=UTC)


def slug(name: str) -> str:
    """Lower-case, runs of non-alphanumerics become '-', trimmed."""
    return re.sub(r"[\W_]+", "-", name.lower()).strip("-")


# --------------------------------------------------------------------------
# Sources: external URIs of the team's (fictional) systems.

def standup(day: str) -> str:
    return f"https://notes.example.org/{day}-standup"


def notes(day: str, what: str) -> str:
    return f"https://notes.example.org/{day}-{what}"


def pr(repo: str, n: int) -> str:
    return f"https://git.example.org/{repo}/pull/{n}"


def issue(repo: str, n: int) -> str:
    return f"https://git.example.org/{repo}/issues/{n}"


def adr(n: int, title: str) -> str:
    return f"https://wiki.example.org/adr/{n:03d}-{slug(title)}"


def wiki(page: str) -> str:
    return f"https://wiki.example.org/{page}"


def chat(channel: str, msg: int) -> str:
    return f"https://chat.example.org/{channel}/p/{msg}"


NOSRC: list[str] = []  # an assertion recorded without any source (lint: missing_source)

# --------------------------------------------------------------------------
# Entities: (type, name, description, aliases)

ENTITIES: list[tuple[str, str, str, list[str]]] = [
    # People
    ("Person", "Maya Chen", "Staff engineer who leads the graph and storage work.", []),
    ("Person", "Tomas Ortega", "Backend engineer working on APIs, sync and search.", []),
    ("Person", "Priya Raman", "Engineer focused on search relevance and language processing.", []),
    ("Person", "Jonas Weber", "Platform engineer responsible for CI and deployments.", []),
    ("Person", "Aiko Tanaka", "Data engineer working on audit history and analytics.", []),
    # Concepts
    ("Concept", "Graph database", "Storing data as nodes and typed edges and querying it by traversal.", ["graph db"]),
    ("Concept", "Full-text search", "Ranking documents against keyword queries with an inverted index and BM25.", ["FTS", "keyword search"]),
    ("Concept", "Temporal data", "Data that records when facts were true and when they were recorded.", ["bitemporal data", "time travel"]),
    ("Concept", "Entity extraction", "Finding names of people, projects and things in free text.", ["NER"]),
    ("Concept", "Local-first", "Software that keeps the primary copy of data on the user's device and works offline.", ["offline-first"]),
    ("Concept", "Vector search", "Nearest-neighbour search over embeddings for semantic similarity.", ["embedding search", "semantic search"]),
    ("Concept", "Observability", "Understanding a running system from its metrics, logs and traces.", []),
    # Tools
    ("Tool", "Kuzu", "An embedded property-graph database queried with Cypher.", ["KuzuDB"]),
    ("Tool", "Neo4j", "A graph database server queried with Cypher.", []),
    ("Tool", "SQLite", "An embedded, serverless SQL database engine.", []),
    ("Tool", "PostgreSQL", "An open-source relational database server.", ["Postgres"]),
    ("Tool", "DuckDB", "An in-process analytical SQL database.", []),
    ("Tool", "spaCy", "A natural language processing library for Python.", []),
    ("Tool", "FastAPI", "A Python web framework for typed HTTP APIs.", []),
    ("Tool", "Redis", "An in-memory key-value store used for caching and rate limiting.", []),
    ("Tool", "Elasticsearch", "A distributed search and analytics engine built on Lucene.", ["ES"]),
    ("Tool", "Tantivy", "A full-text search engine library written in Rust.", []),
    ("Tool", "Qdrant", "A vector similarity search engine.", []),
    ("Tool", "pytest", "A testing framework for Python.", []),
    ("Tool", "Docker", "A platform for building and running containers.", []),
    ("Tool", "Kubernetes", "A container orchestration system.", ["k8s"]),
    ("Tool", "Prometheus", "A metrics collection and alerting toolkit.", []),
    # Repositories
    ("Repo", "graph-core", "Schema, storage layer and query API behind Atlas.", []),
    ("Repo", "search-service", "Indexer and query service behind Beacon.", []),
    ("Repo", "platform-infra", "Helm charts, Terraform modules and CI images for every service.", ["infra"]),
    # Projects
    ("Project", "Atlas", "A knowledge graph of the team's services, documents and decisions.", ["atlas-app", "knowledge graph"]),
    ("Project", "Beacon", "An internal search portal over engineering docs, tickets and runbooks.", ["beacon-search"]),
    ("Project", "Compass", "Matches new ideas and requests to existing projects through paths in the Atlas graph.", ["idea matcher"]),
    ("Project", "Ledger", "A time-travel audit log of configuration changes across services.", ["config-ledger"]),
    ("Project", "Harbor", "Moves every service from hand-run Docker hosts to Kubernetes.", ["k8s migration"]),
    ("Project", "Quill", "Extracts people, projects and decisions from meeting notes into Atlas.", ["notes-extractor"]),
    ("Project", "Lighthouse", "Shared observability dashboards and alerting for all services.", []),
    ("Project", "Ferry", "Offline-first sync of field notes between the mobile app and the backend.", ["offline sync"]),
    ("Project", "Sextant", "An experiment with vector search over engineering documents.", []),
    ("Project", "Drydock", "Rebuilds the CI pipeline around containerised, parallel test runs.", ["ci-revamp"]),
    ("Project", "Tidewater", "An analytics warehouse for usage and audit data.", []),
    ("Project", "Anchor", "A single API gateway with auth and rate limiting in front of internal services.", ["api-gateway"]),
    # Decisions
    ("Decision", "Use Neo4j for the graph store", "Run Atlas on a Neo4j server.", []),
    ("Decision", "Adopt Kuzu for the graph store", "Move Atlas to the embedded Kuzu database instead of a Neo4j server.", []),
    ("Decision", "Move deployments to Kubernetes", "Deploy every service to the shared Kubernetes cluster.", []),
    ("Decision", "Keep Ferry local-first on SQLite", "Ferry keeps the primary copy of notes in SQLite on the device.", []),
    ("Decision", "Replace Elasticsearch with Tantivy", "Beacon indexes with an embedded Tantivy index instead of an Elasticsearch cluster.", []),
    ("Decision", "Defer vector search until Atlas v2", "Park vector search work until the Atlas v2 graph ships.", []),
]

# Short names for the decision refs used below.
D_NEO4J = "decision:use-neo4j-for-the-graph-store"
D_KUZU = "decision:adopt-kuzu-for-the-graph-store"
D_K8S = "decision:move-deployments-to-kubernetes"
D_FERRY = "decision:keep-ferry-local-first-on-sqlite"
D_TANTIVY = "decision:replace-elasticsearch-with-tantivy"
D_DEFER = "decision:defer-vector-search-until-atlas-v2"


# --------------------------------------------------------------------------
# The history, written in the order things were recorded.

class Journal:
    """Collects statements; record times come from a per-day clock.

    ``rec`` may be omitted (recorded on the valid-from day), a day
    ("2026-05-11": recorded late, on that day) or a full UTC instant.
    """

    def __init__(self) -> None:
        self.items: list[Line] = []
        self._clock: dict[str, datetime] = {}

    def _stamp(self, day: str, rec: str | None) -> str:
        if rec is not None and "T" in rec:
            return rec
        rday = rec or day
        last = self._clock.get(rday)
        if last is None:
            start = datetime.fromisoformat(rday).replace(tzinfo=UTC)
            t = start + timedelta(hours=9, minutes=zlib.crc32(rday.encode()) % 90)
        else:
            t = last + timedelta(minutes=2 + zlib.crc32(f"{rday}/{len(self.items)}".encode()) % 7)
        self._clock[rday] = t
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    def a(self, subject: str, predicate: str, obj: Any, valid_from: str, *, src: list[str] | None = None,
          valid_to: str | None = None, rec: str | None = None, by: str = "operator",
          key: str | None = None) -> None:
        line = {"op": "assert", "subject": subject, "predicate": predicate, "object": obj,
                "valid_from": valid_from}
        if valid_to is not None:
            line["valid_to"] = valid_to
        line["sources"] = list(src) if src is not None else [standup(valid_from)]
        line["recorded_at"] = self._stamp(valid_from, rec)
        line["asserted_by"] = by
        self.items.append({"line": line, "key": key})

    def end(self, subject: str, predicate: str, obj: str | None, at: str, *, rec: str | None = None) -> None:
        line = {"op": "end", "subject": subject, "predicate": predicate}
        if obj is not None:
            line["object"] = obj
        line["at"] = at
        line["recorded_at"] = self._stamp(at, rec)
        self.items.append({"line": line, "key": None})

    def retract(self, key: str, reason: str, at: str) -> None:
        self.items.append({"line": {"op": "retract", "fact": None, "reason": reason, "at": at},
                           "key": key})


def history() -> Journal:
    j = Journal()
    a, end = j.a, j.end

    # ---- 2025 Q1 ------------------------------------------------------------
    d = "2025-01-06"
    a("project:atlas", "status", "idea", d, src=[notes(d, "planning")])
    a("project:atlas", "owner", "person:maya-chen", d, src=[notes(d, "planning")])
    a("project:atlas", "relates_to", "concept:graph-database", d, src=[notes(d, "planning")])
    a("project:atlas", "summary", "Idea: one graph of our services, docs and decisions that people and agents can query.",
      d, src=[notes(d, "planning")])
    a("person:maya-chen", "relates_to", "concept:graph-database", d, src=NOSRC)

    d = "2025-01-13"
    a("project:beacon", "status", "planned", d, src=NOSRC)
    a("project:beacon", "owner", "person:priya-raman", d)
    a("project:beacon", "relates_to", "concept:full-text-search", d)
    a("project:beacon", "priority", "p1", d, src=NOSRC)

    d = "2025-01-20"
    a("project:atlas", "status", "planned", d, src=[wiki("planning/2025-q1")])
    a("project:atlas", "priority", "p1", d, src=[wiki("planning/2025-q1")])
    a("project:atlas", "uses", "tool:sqlite", d, src=[pr("atlas", 3)])
    a("project:drydock", "status", "active", d, src=[issue("platform-infra", 41)])
    a("project:drydock", "owner", "person:jonas-weber", d, src=[issue("platform-infra", 41)])
    a("project:drydock", "uses", "tool:pytest", d, src=[pr("platform-infra", 44)])
    a("project:drydock", "uses", "tool:docker", d, src=[pr("platform-infra", 44)])

    d = "2025-01-27"
    a("repo:graph-core", "status", "active", d, src=NOSRC)
    a("repo:graph-core", "owner", "person:maya-chen", d, src=[pr("graph-core", 1)])
    a("repo:graph-core", "uses", "tool:sqlite", d, src=[pr("graph-core", 1)])

    d = "2025-02-03"
    a("project:beacon", "status", "active", d, src=NOSRC)
    a("project:beacon", "uses", "tool:elasticsearch", d, src=[pr("search-service", 2)])
    a("project:beacon", "uses", "tool:postgresql", d, src=[pr("search-service", 2)])
    a("project:beacon", "uses", "tool:fastapi", d, src=[pr("search-service", 5)])
    a("repo:search-service", "owner", "person:priya-raman", d, src=[pr("search-service", 1)])
    a("project:beacon", "uses", "repo:search-service", d, src=NOSRC)
    a("tool:elasticsearch", "relates_to", "concept:full-text-search", d, src=NOSRC)
    a("project:atlas", "evaluates", "tool:neo4j", d, src=[chat("eng-graph", 1042)])

    d = "2025-02-14"
    adr1 = adr(1, "Use Neo4j for the graph store")
    a(D_NEO4J, "status", "active", d, src=[adr1])
    a(D_NEO4J, "owner", "person:maya-chen", d, src=[adr1])
    a(D_NEO4J, "decides", "tool:neo4j", d, src=[adr1])
    a(D_NEO4J, "decides", "project:atlas", d, src=[adr1])
    a("tool:neo4j", "relates_to", "concept:graph-database", d, src=NOSRC)

    d = "2025-03-03"
    a("project:atlas", "status", "active", d, src=[notes(d, "kickoff")])
    end("project:atlas", "uses", "tool:sqlite", d)
    a("project:atlas", "uses", "tool:neo4j", d, src=[pr("atlas", 17)])
    end("project:atlas", "evaluates", "tool:neo4j", d)
    end("repo:graph-core", "uses", "tool:sqlite", d)
    a("repo:graph-core", "uses", "tool:neo4j", d, src=[pr("graph-core", 9)])
    a("project:atlas", "uses", "repo:graph-core", d, src=[pr("atlas", 17)])
    a("project:atlas", "deadline", "2025-09-30", d, src=[notes(d, "kickoff")])

    d = "2025-03-10"
    adr2 = adr(2, "Move deployments to Kubernetes")
    a(D_K8S, "status", "active", d, src=[adr2])
    a(D_K8S, "decides", "tool:kubernetes", d, src=[adr2])
    a(D_K8S, "decides", "project:harbor", d, src=[adr2])
    a("project:harbor", "status", "planned", d, src=[adr2])
    a("project:harbor", "owner", "person:jonas-weber", d, src=[adr2])
    a("project:harbor", "priority", "p0", d, src=[wiki("planning/2025-q2")])

    d = "2025-03-17"
    a("project:ledger", "status", "idea", d, src=[chat("eng-data", 311)])
    a("project:ledger", "owner", "person:aiko-tanaka", d, src=[chat("eng-data", 311)])
    a("project:ledger", "relates_to", "concept:temporal-data", d, src=[chat("eng-data", 311)])

    # ---- 2025 Q2 ------------------------------------------------------------
    d = "2025-04-07"
    a("project:harbor", "status", "active", d, src=NOSRC)
    a("project:harbor", "uses", "tool:docker", d, src=[pr("platform-infra", 58)])
    a("project:harbor", "uses", "tool:kubernetes", d, src=[pr("platform-infra", 58)])
    a("project:harbor", "uses", "repo:platform-infra", d, src=[pr("platform-infra", 58)])
    a("repo:platform-infra", "owner", "person:jonas-weber", d, src=[pr("platform-infra", 58)])

    d = "2025-04-14"
    a("project:anchor", "status", "active", d, src=[issue("anchor", 1)])
    a("project:anchor", "owner", "person:tomas-ortega", d, src=[issue("anchor", 1)])
    a("project:anchor", "uses", "tool:fastapi", d, src=[pr("anchor", 4)])
    a("project:anchor", "uses", "tool:redis", d, src=[pr("anchor", 4)])
    a("project:anchor", "priority", "p2", d, src=NOSRC)
    a("project:beacon", "status", "blocked", d)
    a("project:beacon", "blocked_by", "project:harbor", d, src=[issue("search-service", 23)])

    d = "2025-04-22"
    a("project:ledger", "status", "planned", d, src=[wiki("planning/2025-q2")])
    a("project:ledger", "uses", "tool:postgresql", d, src=[pr("ledger", 2)])
    a("tool:postgresql", "relates_to", "concept:temporal-data", d, src=["https://www.postgresql.org/docs/current/rangetypes.html"])

    d = "2025-05-05"
    a("project:quill", "status", "idea", d, src=[chat("eng-nlp", 77)])
    a("project:quill", "owner", "person:priya-raman", d, src=[chat("eng-nlp", 77)])
    a("project:quill", "relates_to", "concept:entity-extraction", d, src=NOSRC)
    a("project:quill", "evaluates", "tool:spacy", d, src=[chat("eng-nlp", 80)])
    a("tool:spacy", "relates_to", "concept:entity-extraction", d, src=["https://spacy.io/usage/linguistic-features"])
    a("tool:spacy", "homepage", "https://spacy.io/", d, src=["https://spacy.io/"])

    d = "2025-05-12"
    a("project:atlas", "evaluates", "tool:kuzu", d, src=[issue("atlas", 31)])
    a("tool:kuzu", "relates_to", "concept:graph-database", d, src=["https://docs.kuzudb.com/"])
    a("tool:kuzu", "relates_to", "concept:full-text-search", d, src=["https://docs.kuzudb.com/extensions/full-text-search/"])
    a("tool:kuzu", "homepage", "https://kuzudb.com/", d, src=["https://kuzudb.com/"])
    a("project:ledger", "status", "active", d, src=NOSRC)

    d = "2025-05-19"
    a("project:ferry", "status", "planned", d, src=[wiki("planning/2025-q2")])
    a("project:ferry", "owner", "person:tomas-ortega", d, src=[wiki("planning/2025-q2")])
    a("project:ferry", "relates_to", "concept:local-first", d, src=NOSRC)
    a("tool:sqlite", "relates_to", "concept:local-first", d, src=NOSRC)

    d = "2025-06-02"
    adr3 = adr(3, "Keep Ferry local-first on SQLite")
    a(D_FERRY, "status", "active", d, src=[adr3])
    a(D_FERRY, "decides", "project:ferry", d, src=[adr3])
    a(D_FERRY, "decides", "concept:local-first", d, src=[adr3])
    a("project:ferry", "status", "active", d, src=NOSRC)
    a("project:ferry", "uses", "tool:sqlite", d, src=[pr("ferry", 6)])

    d = "2025-06-09"
    end("project:beacon", "blocked_by", "project:harbor", d)
    a("project:beacon", "status", "active", d, src=[issue("search-service", 23)])

    d = "2025-06-16"
    adr4 = adr(4, "Adopt Kuzu for the graph store")
    a(D_KUZU, "status", "active", d, src=[adr4])
    a(D_KUZU, "owner", "person:maya-chen", d, src=[adr4])
    a(D_KUZU, "decides", "tool:kuzu", d, src=[adr4])
    a(D_KUZU, "decides", "project:atlas", d, src=[adr4])
    a(D_KUZU, "replaces", D_NEO4J, d, src=[adr4])
    a(D_KUZU, "relates_to", "concept:local-first", d, src=[adr4])
    a(D_NEO4J, "status", "archived", d, src=[adr4])
    end("project:atlas", "evaluates", "tool:kuzu", d)

    # ---- 2025 Q3 ------------------------------------------------------------
    d = "2025-07-07"
    a("project:beacon", "evaluates", "tool:tantivy", d, src=[issue("search-service", 48)])
    a("person:priya-raman", "evaluates", "tool:tantivy", d, valid_to="2025-08-18",
      src=[chat("eng-search", 512)])
    a("tool:tantivy", "relates_to", "concept:full-text-search", d, src=["https://github.com/quickwit-oss/tantivy"])
    a("tool:tantivy", "homepage", "https://github.com/quickwit-oss/tantivy", d,
      src=["https://github.com/quickwit-oss/tantivy"])

    d = "2025-07-14"
    end("project:atlas", "uses", "tool:neo4j", d)
    a("project:atlas", "uses", "tool:kuzu", d, src=[pr("atlas", 52)])
    end("repo:graph-core", "uses", "tool:neo4j", d)
    a("repo:graph-core", "uses", "tool:kuzu", d, src=[pr("graph-core", 40)])
    a("tool:kuzu", "replaces", "tool:neo4j", d, src=[pr("graph-core", 40)])
    a("tool:kuzu", "owner", "person:maya-chen", d, src=NOSRC)
    a("project:atlas", "summary", "Graph of services, docs and decisions, now on embedded Kuzu.", d,
      src=[pr("atlas", 52)])

    d = "2025-08-04"
    a("project:drydock", "status", "done", d, src=[notes(d, "retro")])
    a("project:lighthouse", "status", "idea", d, src=[chat("eng-platform", 904)])
    a("project:lighthouse", "owner", "person:jonas-weber", d, src=[chat("eng-platform", 904)])
    a("project:lighthouse", "relates_to", "concept:observability", d, src=NOSRC)
    a("project:lighthouse", "evaluates", "tool:prometheus", d, src=[chat("eng-platform", 904)])
    a("tool:prometheus", "relates_to", "concept:observability", d, src=["https://prometheus.io/docs/introduction/overview/"])

    d = "2025-08-18"
    adr5 = adr(5, "Replace Elasticsearch with Tantivy")
    a(D_TANTIVY, "status", "active", d, src=[adr5])
    a(D_TANTIVY, "owner", "person:priya-raman", d, src=[adr5])
    a(D_TANTIVY, "decides", "tool:tantivy", d, src=[adr5])
    a(D_TANTIVY, "decides", "project:beacon", d, src=[adr5])
    end("project:beacon", "evaluates", "tool:tantivy", d)

    d = "2025-08-25"
    a("project:quill", "status", "planned", d, src=[wiki("planning/2025-q3")])
    a("project:quill", "depends_on", "project:atlas", d, src=[wiki("planning/2025-q3")])

    d = "2025-09-01"
    a("project:beacon", "owner", "person:tomas-ortega", d, src=[chat("eng-leads", 220)])
    # Recorded by mistake against the wrong project; retracted on 2025-09-09.
    a("project:atlas", "owner", "person:tomas-ortega", d, src=[chat("eng-leads", 220)],
      by="agent", key="wrong-owner")
    a("repo:search-service", "owner", "person:tomas-ortega", d, src=[chat("eng-leads", 220)])

    j.retract("wrong-owner",
              "Recorded against the wrong project: Tomas took over Beacon on 2025-09-01; Maya still owns Atlas.",
              "2025-09-09T08:40:00Z")

    d = "2025-09-15"
    end("project:beacon", "uses", "tool:elasticsearch", d)
    a("project:beacon", "uses", "tool:tantivy", d, src=[pr("search-service", 77)])
    a("tool:tantivy", "replaces", "tool:elasticsearch", d, src=[pr("search-service", 77)])
    a("project:quill", "status", "active", d, src=NOSRC)
    end("project:quill", "evaluates", "tool:spacy", d)
    a("project:quill", "uses", "tool:spacy", d, src=[pr("quill", 3)])

    d = "2025-09-29"
    a(D_TANTIVY, "status", "done", d, src=[notes(d, "retro")])

    # ---- 2025 Q4 ------------------------------------------------------------
    d = "2025-10-06"
    a("project:atlas", "status", "paused", d, src=[notes(d, "planning")])
    a("project:atlas", "summary", "Paused while the team finishes the Beacon search cutover.", d,
      src=[notes(d, "planning")])

    d = "2025-10-20"
    a("project:harbor", "status", "done", d, src=[notes(d, "retro")])
    a(D_K8S, "status", "done", d, src=[notes(d, "retro")])
    a("project:beacon", "uses", "tool:kubernetes", d, src=NOSRC)

    d = "2025-10-27"
    a("project:sextant", "status", "idea", d, src=[chat("eng-search", 733)])
    a("project:sextant", "owner", "person:aiko-tanaka", d, src=[chat("eng-search", 733)])
    a("project:sextant", "relates_to", "concept:vector-search", d, src=[chat("eng-search", 733)])
    a("project:sextant", "evaluates", "tool:qdrant", d, src=[issue("sextant", 1)])
    a("tool:qdrant", "relates_to", "concept:vector-search", d, src=["https://qdrant.tech/documentation/"])
    a("concept:vector-search", "relates_to", "concept:full-text-search", d, src=NOSRC)

    # Ledger paused on 2025-11-03, but nobody wrote it down until 2025-11-24.
    d = "2025-11-03"
    a("project:ledger", "status", "paused", d, rec="2025-11-24", src=[notes("2025-11-24", "standup")])

    d = "2025-11-10"
    a("project:sextant", "evaluates", "tool:kuzu", d, src=[issue("sextant", 4)])
    a("tool:kuzu", "relates_to", "concept:vector-search", d, src=["https://docs.kuzudb.com/extensions/vector/"])

    d = "2025-11-17"
    a("project:compass", "status", "idea", d, src=[chat("eng-graph", 1876)])
    a("project:compass", "owner", "person:maya-chen", d, src=[chat("eng-graph", 1876)])
    a("project:compass", "relates_to", "concept:graph-database", d, src=[chat("eng-graph", 1876)])
    a("project:compass", "relates_to", "project:atlas", d, src=NOSRC)

    d = "2025-11-24"
    a("project:ledger", "summary", "Paused: Aiko is on the Sextant experiment until January.", d, src=NOSRC)

    d = "2025-12-01"
    a("project:atlas", "status", "active", d, src=[wiki("planning/2026-q1")])
    a("project:atlas", "priority", "p0", d, src=[wiki("planning/2026-q1")])
    a("project:atlas", "deadline", "2026-03-31", d, src=[wiki("planning/2026-q1")])
    a("project:atlas", "summary", "Atlas v2: the Kuzu graph with typed edges and time-stamped facts, due end of Q1 2026.",
      d, src=[wiki("planning/2026-q1")])

    d = "2025-12-15"
    a("project:anchor", "status", "done", d, src=[notes(d, "retro")])

    # ---- 2026 Q1 ------------------------------------------------------------
    d = "2026-01-12"
    a("project:compass", "status", "planned", d, src=NOSRC)
    a("project:compass", "depends_on", "project:atlas", d, src=[wiki("planning/2026-q1")])
    a("project:ledger", "status", "active", d, src=NOSRC)
    a("project:ledger", "uses", "tool:duckdb", d, src=[pr("ledger", 31)])

    d = "2026-01-19"
    adr6 = adr(6, "Defer vector search until Atlas v2")
    a(D_DEFER, "status", "active", d, src=[adr6])
    a(D_DEFER, "decides", "project:sextant", d, src=[adr6])
    a("project:sextant", "status", "paused", d, src=[adr6])
    end("project:sextant", "evaluates", None, d)  # closes Qdrant and Kuzu at once

    d = "2026-02-02"
    a("project:atlas", "owner", "person:jonas-weber", d, src=[chat("eng-leads", 388)])
    a("repo:platform-infra", "owner", "person:aiko-tanaka", d, src=[chat("eng-leads", 388)])
    a("project:compass", "status", "active", d, src=[notes(d, "kickoff")])
    a("project:compass", "uses", "tool:kuzu", d, src=[pr("compass", 2)])
    a("project:compass", "uses", "repo:graph-core", d, src=[pr("compass", 2)])
    # The single-value conflict: Maya wrote p1 at the kickoff, the planning
    # assistant copied p2 from the draft roadmap the next morning.
    a("project:compass", "priority", "p1", d, src=[notes(d, "kickoff")])
    a("project:compass", "priority", "p2", d, rec="2026-02-03", by="agent",
      src=[wiki("planning/2026-q1-draft")])

    d = "2026-02-09"
    a("project:lighthouse", "status", "archived", d, src=[notes(d, "planning")])
    end("project:lighthouse", "evaluates", "tool:prometheus", d)
    a("project:harbor", "uses", "tool:prometheus", d, src=[pr("platform-infra", 170)])
    a("project:lighthouse", "summary", "Archived: the Prometheus setup that Harbor ships covers the need.",
      d, src=[notes(d, "planning")])

    d = "2026-03-02"
    a("project:tidewater", "status", "idea", d, src=[chat("eng-data", 1204)])
    a("project:tidewater", "owner", "person:aiko-tanaka", d, src=NOSRC)
    a("project:tidewater", "relates_to", "concept:temporal-data", d, src=NOSRC)

    d = "2026-03-30"
    a("project:atlas", "deadline", "2026-06-30", d, src=[notes(d, "planning")])

    # ---- 2026 Q2 ------------------------------------------------------------
    d = "2026-04-01"
    a("project:harbor", "status", "archived", d, src=NOSRC)

    # Ferry paused on 2026-04-06; written down five weeks later.
    d = "2026-04-06"
    a("project:ferry", "status", "paused", d, rec="2026-05-11", src=[notes("2026-05-11", "planning")])
    a("project:ferry", "summary", "Paused: the mobile team dropped offline sync from the 2026 roadmap.", d,
      rec="2026-05-11", src=[notes("2026-05-11", "planning")])

    d = "2026-05-04"
    a("project:tidewater", "status", "planned", d, src=[wiki("planning/2026-q2")])
    a("project:tidewater", "uses", "tool:duckdb", d, src=[pr("tidewater", 1)])
    a("project:tidewater", "depends_on", "project:ledger", d, src=[wiki("planning/2026-q2")])
    a("project:tidewater", "priority", "p2", d, src=[wiki("planning/2026-q2")])

    d = "2026-05-29"
    a("project:beacon", "status", "done", d, src=[notes(d, "retro")])
    a("project:beacon", "summary", "Done: the search portal runs on Tantivy and covers all internal docs.", d,
      src=[notes(d, "retro")])

    # Tidewater went active on 2026-06-15; recorded on 2026-07-20.
    d = "2026-06-15"
    a("project:tidewater", "status", "active", d, rec="2026-07-20", src=[pr("tidewater", 14)])
    a("project:tidewater", "uses", "tool:postgresql", d, rec="2026-07-20", src=[pr("tidewater", 14)])

    d = "2026-06-29"
    a("project:atlas", "summary", "Atlas v2 shipped on Kuzu; next: temporal queries and Quill ingestion.", d,
      src=[notes(d, "retro")])
    end("project:atlas", "deadline", None, d)
    a("project:atlas", "relates_to", "concept:temporal-data", d, src=NOSRC)

    # ---- 2026 Q3-Q4 ---------------------------------------------------------
    d = "2026-08-31"
    a("project:ledger", "status", "done", d, src=[notes(d, "retro")])

    # Quill blocked from 2026-09-07 by the graph-core schema migration;
    # recorded three weeks later.
    d = "2026-09-07"
    a("project:quill", "status", "blocked", d, rec="2026-09-28", src=[issue("quill", 58)])
    a("project:quill", "blocked_by", "repo:graph-core", d, rec="2026-09-28", src=[issue("quill", 58)])

    d = "2026-09-14"
    a("project:compass", "deadline", "2026-12-15", d, src=[wiki("planning/2026-q4")])

    d = "2026-10-05"
    a("project:atlas", "priority", "p1", d, src=[wiki("planning/2026-q4")])
    a("project:compass", "summary", "Ranks projects for a new idea by explained paths through the Atlas graph.", d,
      src=NOSRC)

    d = "2026-10-19"
    a("repo:graph-core", "summary", "Schema v3 migration in progress; ingestion API frozen until it lands.", d,
      src=[pr("graph-core", 212)])
    return j


# --------------------------------------------------------------------------
# Evidence: the raw records (chat, notes, PRs, ADRs, tool output) behind the
# history, written to records.jsonl. Ingested into a fresh store in file
# order they become rec:1, rec:2, ...; the refs are computed here, never
# written by hand. Each record lists the assertions it supports as
# (subject, predicate, object, valid_from); object "*" matches any value
# (summaries) and valid_from defaults to the record's day. Every support
# must match exactly one assertion, which then cites the record in its
# sources. A record that supports nothing is noise, and says so.

REC_OUT = EXAMPLES / "records.jsonl"
NOISE = "noise"
GUIDANCE = "guidance"  # a rule or constraint: it supports no assertion, and the packer puts it first
# A fake secret, AWS's documented example key pair: ingest must redact it.
FAKE_AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
FAKE_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# (key, ts, kind, source, scope, text, supports)
RECORDS: list[tuple[str, str, str, str, str, str, list[tuple[str, ...]] | str]] = [
    ("atlas-idea", "2025-01-06T08:40:00Z", "note", "notes:planning", "team:graph",
     "Planning notes, 2025-01-06. New idea: Atlas, one graph of our services, docs and decisions that people and "
     "agents can query. Maya Chen owns Atlas. It is only an idea for now; it relates to graph databases, which Maya "
     "has used before.",
     [("project:atlas", "status", "idea"), ("project:atlas", "owner", "person:maya-chen"),
      ("project:atlas", "relates_to", "concept:graph-database"), ("project:atlas", "summary", "*")]),
    ("beacon-standup", "2025-01-13T08:30:00Z", "note", "notes:standup", "team:search",
     "Standup: Priya Raman owns Beacon, the internal search portal over engineering docs, tickets and runbooks. "
     "Beacon is all about full-text search; first sketch of the index layout by Friday.",
     [("project:beacon", "owner", "person:priya-raman"), ("project:beacon", "relates_to", "concept:full-text-search")]),
    ("coffee", "2025-01-15T12:05:00Z", "message", "slack#random", "org:eng",
     "Reminder: the coffee machine on the 3rd floor is fixed, and the lunch-and-learn moved to Thursday.",
     NOISE),
    ("drydock-pr44", "2025-01-20T08:45:00Z", "message", "git:platform-infra", "team:platform",
     "PR 44 (platform-infra): Drydock runs the pytest suite inside Docker containers, split across 8 parallel "
     "workers. Jonas Weber owns Drydock and the project is active as of today (issue 41).",
     [("project:drydock", "status", "active"), ("project:drydock", "owner", "person:jonas-weber"),
      ("project:drydock", "uses", "tool:pytest"), ("project:drydock", "uses", "tool:docker")]),
    ("beacon-es", "2025-02-03T08:30:00Z", "message", "git:search-service", "team:search",
     "PR 2 (search-service): Beacon indexes documents with Elasticsearch and keeps document metadata in "
     "PostgreSQL. PR 5 adds the FastAPI query endpoint.",
     [("project:beacon", "uses", "tool:elasticsearch"), ("project:beacon", "uses", "tool:postgresql"),
      ("project:beacon", "uses", "tool:fastapi")]),
    ("neo4j-eval", "2025-02-03T08:50:00Z", "message", "slack#eng-graph", "team:graph",
     "Atlas is evaluating Neo4j this week; I have a sandbox running with last month's service inventory if "
     "anyone wants to poke at it.",
     [("project:atlas", "evaluates", "tool:neo4j")]),
    ("ci-run", "2025-02-20T16:12:00Z", "tool_result", "ci:drydock", "team:platform",
     "pytest -n 8 --dist loadfile\n412 passed, 3 skipped, 2 warnings in 48.20s\nimage: ci-py311:2025.02  "
     "workers: 8  cache: hit",
     NOISE),
    ("atlas-kickoff", "2025-03-03T08:40:00Z", "note", "notes:kickoff", "team:graph",
     "Atlas kickoff: Atlas is active from today. Atlas switched from SQLite to Neo4j (PR 17) and uses graph-core "
     "for its storage layer. The v1 deadline is 2025-09-30.",
     [("project:atlas", "status", "active", "2025-03-03"), ("project:atlas", "uses", "tool:neo4j"),
      ("project:atlas", "uses", "repo:graph-core"), ("project:atlas", "deadline", "2025-09-30")]),
    ("harbor-bootstrap", "2025-04-07T08:55:00Z", "message", "slack#eng-platform", "team:platform",
     "Harbor bootstrap works: the staging Kubernetes cluster is up and the first namespaces are created. "
     "Pasting the profile I used so you can reproduce it:\n[harbor-staging]\n"
     f"aws_access_key_id = {FAKE_AWS_KEY}\naws_secret_access_key = {FAKE_AWS_SECRET}\nregion = eu-central-1",
     [("project:harbor", "uses", "tool:kubernetes")]),
    ("beacon-blocked", "2025-04-14T08:50:00Z", "note", "notes:standup", "team:search",
     "Standup: Beacon is blocked by Harbor until the cluster is ready; the indexer needs the new Kubernetes "
     "namespace (search-service issue 23).",
     [("project:beacon", "status", "blocked"), ("project:beacon", "blocked_by", "project:harbor")]),
    ("quill-idea", "2025-05-05T08:40:00Z", "message", "slack#eng-nlp", "team:search",
     "New idea: Quill, which pulls people, projects and decisions out of meeting notes into Atlas. Priya Raman "
     "owns Quill. Quill is evaluating spaCy for the entity extraction part.",
     [("project:quill", "status", "idea"), ("project:quill", "owner", "person:priya-raman"),
      ("project:quill", "evaluates", "tool:spacy")]),
    ("kuzu-eval", "2025-05-12T08:30:00Z", "message", "git:atlas", "team:graph",
     "Issue 31 (atlas): Atlas evaluates Kuzu as an embedded alternative to the Neo4j server. No server to run, "
     "and Cypher carries over.",
     [("project:atlas", "evaluates", "tool:kuzu")]),
    ("vpn", "2025-05-14T13:20:00Z", "message", "slack#eng-graph", "team:graph",
     "Anyone else seeing the VPN drop every 20 minutes? Restarting the client helps for a while.",
     NOISE),
    ("beacon-unblocked", "2025-06-09T08:30:00Z", "message", "slack#eng-search", "team:search",
     "Harbor gave us the namespace, so Beacon is no longer blocked. Beacon is active again; closing "
     "search-service issue 23.",
     [("project:beacon", "status", "active", "2025-06-09")]),
    ("adr-004", "2025-06-16T08:30:00Z", "doc", "wiki:adr", "team:graph",
     "ADR-004 Adopt Kuzu for the graph store. Status: accepted; supersedes ADR-001 (Use Neo4j for the graph "
     "store), which is archived. Owner: Maya Chen. Decision: Atlas moves from the Neo4j server to the embedded "
     "Kuzu database. Kuzu needs no server and keeps the graph in a local file, in line with our local-first "
     "direction.",
     [("decision:adopt-kuzu-for-the-graph-store", "status", "active"),
      ("decision:adopt-kuzu-for-the-graph-store", "owner", "person:maya-chen"),
      ("decision:adopt-kuzu-for-the-graph-store", "decides", "tool:kuzu"),
      ("decision:adopt-kuzu-for-the-graph-store", "decides", "project:atlas"),
      ("decision:adopt-kuzu-for-the-graph-store", "replaces", "decision:use-neo4j-for-the-graph-store"),
      ("decision:adopt-kuzu-for-the-graph-store", "relates_to", "concept:local-first"),
      ("decision:use-neo4j-for-the-graph-store", "status", "archived")]),
    ("tantivy-eval", "2025-07-07T08:45:00Z", "message", "slack#eng-search", "team:search",
     "Beacon is evaluating Tantivy as a replacement for Elasticsearch (search-service issue 48). Priya Raman "
     "is benchmarking it for the next six weeks.",
     [("project:beacon", "evaluates", "tool:tantivy"), ("person:priya-raman", "evaluates", "tool:tantivy")]),
    ("graph-core-git-log", "2025-07-14T08:10:00Z", "tool_result", "git:graph-core", "team:graph",
     "$ git -C graph-core log --oneline -3 main\n"
     "9f3c2e1 Move the storage layer from Neo4j to Kuzu (#40)\n"
     "41b7a0d Drop Bolt driver settings from config (#39)\n"
     "c02d9e8 Pin Kuzu 0.11 in requirements (#38)",
     [("repo:graph-core", "uses", "tool:kuzu")]),
    ("kuzu-switch", "2025-07-14T08:30:00Z", "message", "slack#eng-graph", "team:graph",
     "Atlas switched from Neo4j to Kuzu today; Maya merged PR 52. With graph-core already moved over in PR 40, "
     "Kuzu replaces Neo4j everywhere. Atlas is now a graph of services, docs and decisions on embedded Kuzu.",
     [("project:atlas", "uses", "tool:kuzu"), ("tool:kuzu", "replaces", "tool:neo4j"),
      ("project:atlas", "summary", "*")]),
    ("kuzu-bench", "2025-07-14T15:40:00Z", "tool_result", "ci:graph-core", "team:graph",
     "bench/import.py --edges 1200000\nimport: 38.4 s (31,250 edges/s)\nquery p50 0.9 ms, p99 4.1 ms\n"
     "peak RSS 612 MB",
     NOISE),
    ("drydock-retro", "2025-08-04T08:30:00Z", "note", "notes:retro", "team:platform",
     "Retro: Drydock is done. CI runs in containers, in parallel, and the median pipeline went from 31 to 9 "
     "minutes.",
     [("project:drydock", "status", "done")]),
    ("jonas-out", "2025-08-11T08:05:00Z", "note", "notes:standup", "team:platform",
     "Standup: Jonas out sick today; the Drydock follow-up review moves to Thursday.",
     NOISE),
    ("beacon-handover", "2025-09-01T08:40:00Z", "message", "slack#eng-leads", "org:eng",
     "Tomas Ortega takes over Beacon from Priya today, including the search-service repo. Priya moves to Quill "
     "full time.",
     [("project:beacon", "owner", "person:tomas-ortega"), ("repo:search-service", "owner", "person:tomas-ortega")]),
    ("tantivy-switch", "2025-09-15T08:30:00Z", "message", "git:search-service", "team:search",
     "We switched Beacon from Elasticsearch to Tantivy on 2025-09-15 (search-service PR 77). Tantivy replaces "
     "Elasticsearch for every index; the old cluster stays read-only until the end of the month.",
     [("project:beacon", "uses", "tool:tantivy"), ("tool:tantivy", "replaces", "tool:elasticsearch")]),
    ("quill-spacy", "2025-09-15T08:50:00Z", "message", "git:quill", "team:search",
     "PR 3 (quill): Quill uses spaCy for its extraction pipeline; the rule-based matchers are in.",
     [("project:quill", "uses", "tool:spacy")]),
    ("ferry-postgres", "2025-09-22T14:02:00Z", "message", "slack#eng-apps", "team:apps",
     "If we moved Ferry to PostgreSQL we would lose offline mode, so no, we are not doing that.",
     NOISE),
    ("atlas-paused", "2025-10-06T08:30:00Z", "note", "notes:planning", "team:graph",
     "Planning: Atlas is now paused while the team finishes the Beacon search cutover.",
     [("project:atlas", "status", "paused"), ("project:atlas", "summary", "*")]),
    ("harbor-retro", "2025-10-20T08:30:00Z", "note", "notes:retro", "team:platform",
     "Retro: Harbor is done. Every service now deploys to the shared Kubernetes cluster, so the decision to move "
     "deployments to Kubernetes (ADR-002) is done too.",
     [("project:harbor", "status", "done"), ("decision:move-deployments-to-kubernetes", "status", "done")]),
    ("sextant-idea", "2025-10-27T08:40:00Z", "message", "slack#eng-search", "team:data",
     "Starting Sextant, an experiment with vector search over engineering docs; Aiko Tanaka owns it. First up, "
     "Sextant evaluates Qdrant (sextant issue 1).",
     [("project:sextant", "status", "idea"), ("project:sextant", "owner", "person:aiko-tanaka"),
      ("project:sextant", "relates_to", "concept:vector-search"), ("project:sextant", "evaluates", "tool:qdrant")]),
    ("compass-idea", "2025-11-17T08:40:00Z", "message", "slack#eng-graph", "team:graph",
     "Idea from Maya Chen: Compass, which matches new requests to existing projects by walking paths in the Atlas "
     "graph. Maya owns Compass for now. Heavy graph database work, so it sits with us.",
     [("project:compass", "status", "idea"), ("project:compass", "owner", "person:maya-chen"),
      ("project:compass", "relates_to", "concept:graph-database")]),
    ("compass-question", "2025-11-18T10:15:00Z", "message", "slack#eng-graph", "team:graph",
     "Does Kuzu support recursive path queries with filters on the edges? Asking for Compass.",
     NOISE),
    ("ledger-paused", "2025-11-24T08:40:00Z", "note", "notes:standup", "team:data",
     "Standup: for the record, Ledger has been paused since 2025-11-03. Aiko is on the Sextant experiment until "
     "January.",
     [("project:ledger", "status", "paused", "2025-11-03")]),
    ("q1-2026", "2025-12-01T08:30:00Z", "doc", "wiki:planning", "org:eng",
     "2026 Q1 planning: Atlas is active again, priority p0. Atlas v2 is the Kuzu graph with typed edges and "
     "time-stamped facts; deadline 2026-03-31.",
     [("project:atlas", "status", "active", "2025-12-01"), ("project:atlas", "priority", "p0"),
      ("project:atlas", "deadline", "2026-03-31"), ("project:atlas", "summary", "*")]),
    ("holidays", "2025-12-19T16:30:00Z", "message", "slack#random", "org:eng",
     "The office is closed from Dec 24 to Jan 2. Happy holidays, everyone!",
     NOISE),
    ("owners-2026", "2026-02-02T08:40:00Z", "message", "slack#eng-leads", "org:eng",
     "Ownership changes from today: Jonas Weber owns Atlas, and Aiko Tanaka takes over platform-infra.",
     [("project:atlas", "owner", "person:jonas-weber"), ("repo:platform-infra", "owner", "person:aiko-tanaka")]),
    ("compass-kickoff", "2026-02-02T09:00:00Z", "note", "notes:kickoff", "team:graph",
     "Compass kickoff: Compass is active. It uses Kuzu through graph-core (compass PR 2). Maya set the priority "
     "to p1.",
     [("project:compass", "status", "active"), ("project:compass", "uses", "tool:kuzu"),
      ("project:compass", "uses", "repo:graph-core"), ("project:compass", "priority", "p1")]),
    ("roadmap-draft", "2026-02-03T08:30:00Z", "doc", "wiki:planning", "org:eng",
     "Draft roadmap 2026 Q1 (not final). Compass: priority p2. Tidewater: not scheduled yet.",
     [("project:compass", "priority", "p2", "2026-02-02")]),
    ("lighthouse-archived", "2026-02-09T08:30:00Z", "note", "notes:planning", "team:platform",
     "Planning: Lighthouse is archived. The Prometheus setup that Harbor ships (platform-infra PR 170) covers "
     "the need.",
     [("project:lighthouse", "status", "archived"), ("project:harbor", "uses", "tool:prometheus"),
      ("project:lighthouse", "summary", "*")]),
    ("kubectl", "2026-03-11T10:02:00Z", "tool_result", "cli:kubectl", "team:platform",
     "$ kubectl get pods -n beacon\nNAME                      READY   STATUS    RESTARTS   AGE\n"
     "beacon-api-5c8b7f-x2kq   2/2     Running   1          3d\nbeacon-indexer-7d9f-mm4t  1/1     Running   0"
     "          3d",
     NOISE),
    ("atlas-deadline", "2026-03-30T08:30:00Z", "note", "notes:planning", "team:graph",
     "Planning: the Atlas v2 deadline moves to 2026-06-30.",
     [("project:atlas", "deadline", "2026-06-30")]),
    ("ferry-paused", "2026-05-11T08:40:00Z", "note", "notes:planning", "team:apps",
     "Planning: Ferry has been paused since 2026-04-06. The mobile team dropped offline sync from the 2026 "
     "roadmap.",
     [("project:ferry", "status", "paused", "2026-04-06"), ("project:ferry", "summary", "*", "2026-04-06")]),
    ("beacon-retro", "2026-05-29T08:30:00Z", "note", "notes:retro", "team:search",
     "Retro: Beacon is done. The search portal runs on Tantivy and covers all internal docs.",
     [("project:beacon", "status", "done"), ("project:beacon", "summary", "*")]),
    ("atlas-v2", "2026-06-29T08:30:00Z", "note", "notes:retro", "team:graph",
     "Retro: Atlas v2 shipped on Kuzu, on time. Next: temporal queries and Quill ingestion.",
     [("project:atlas", "summary", "*")]),
    ("quill-blocked", "2026-09-28T08:30:00Z", "message", "git:quill", "team:search",
     "Issue 58 (quill): Quill has been blocked since 2026-09-07. Quill is blocked by graph-core: the schema v3 "
     "migration froze the ingestion API.",
     [("project:quill", "status", "blocked", "2026-09-07"), ("project:quill", "blocked_by", "repo:graph-core", "2026-09-07")]),
    ("graph-core-v3", "2026-10-19T08:30:00Z", "message", "git:graph-core", "team:graph",
     "PR 212 (graph-core): schema v3 migration in progress; the ingestion API is frozen until it lands.",
     [("repo:graph-core", "summary", "*")]),
    ("graph-rule", "2026-10-26T08:30:00Z", "rule", "wiki:engineering-rules", "org:eng",
     "Rule: any change to the graph-core schema or to Kuzu needs a migration note and a review by Maya Chen "
     "before it merges.",
     GUIDANCE),
    ("local-first-constraint", "2026-10-27T08:30:00Z", "constraint", "wiki:engineering-rules", "org:eng",
     "Constraint: Atlas, Ferry and Compass keep their data on the device or on our own servers; no hosted graph "
     "database and no third-party vector search service.",
     GUIDANCE),
]


def records() -> list[Line]:
    """The evidence records in file order (by ts), each with its ``id`` (demo-NNN) and ``ref`` (rec:N)."""
    out: list[Line] = []
    keys: set[str] = set()
    for key, ts, kind, source, scope, text, supports in RECORDS:
        check(key not in keys, f"duplicate record key {key}")
        keys.add(key)
        out.append({"key": key, "ts": ts, "kind": kind, "source": source, "scope": scope, "text": text,
                    "supports": supports})
    out.sort(key=lambda r: parse_instant(r["ts"]))  # stable: ties keep table order
    for i, r in enumerate(out, 1):
        r["id"] = f"demo-{i:03d}"
        r["ref"] = f"rec:{i}"
    return out


def record_line(r: Line) -> Line:
    return {"id": r["id"], "ts": r["ts"], "kind": r["kind"], "source": r["source"], "scope": r["scope"],
            "text": r["text"]}


def check_records(recs: list[Line]) -> None:
    ids = Counter(r["id"] for r in recs)
    check(all(c == 1 for c in ids.values()), f"duplicate record ids: {[k for k, c in ids.items() if c > 1]}")
    check(40 <= len(recs) <= 60, f"{len(recs)} records (want 40-60)")
    for r in recs:
        where = f"record {r['key']}"
        check(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", r["ts"]) is not None, f"{where}: ts not ISO UTC")
        check(datetime(2025, 1, 1, tzinfo=UTC) <= parse_instant(r["ts"]) < CUTOFF, f"{where}: ts out of range")
        check(r["kind"] in ("message", "note", "doc", "tool_result", "rule", "constraint"), f"{where}: bad kind {r['kind']}")
        check((r["supports"] == GUIDANCE) == (r["kind"] in ("rule", "constraint")), f"{where}: guidance is rules")
        check(r["text"].strip() != "" and r["text"].isascii(), f"{where}: empty or non-ASCII text")
        check(r["supports"] in (NOISE, GUIDANCE) or bool(r["supports"]),
              f"{where}: supports nothing but is not marked noise")
    times = [parse_instant(r["ts"]) for r in recs]
    check(times == sorted(times), "records are not in ts order")
    noise = [r for r in recs if r["supports"] == NOISE]
    check(len(noise) >= 3, "the evidence has a few noise records")
    secrets = [r for r in recs if re.search(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", r["text"])]
    check(len(secrets) == 1 and FAKE_AWS_KEY in secrets[0]["text"], "exactly one record carries the fake AWS key")


def cite_records(recs: list[Line], statements: list[Line]) -> None:
    """Add each record's ref to the sources of the assertions it supports."""
    for r in recs:
        if r["supports"] in (NOISE, GUIDANCE):
            continue
        day = r["ts"][:10]
        for sup in r["supports"]:
            subject, predicate, obj = sup[:3]
            vf = sup[3] if len(sup) > 3 else day
            match = [i for i in statements if i["line"]["op"] == "assert"
                     and i["line"]["subject"] == subject and i["line"]["predicate"] == predicate
                     and (obj == "*" or str(i["line"]["object"]) == obj) and i["line"]["valid_from"] == vf]
            check(len(match) == 1, f"record {r['key']}: {sup} matches {len(match)} assertions (want 1)")
            line = match[0]["line"]
            check(bool(line["sources"]), f"record {r['key']}: {sup} is one of the unsourced assertions")
            check(r["ref"] not in line["sources"], f"record {r['key']}: {sup} listed twice")
            line["sources"].append(r["ref"])


# --------------------------------------------------------------------------
# Validation against the registry, the import rules and the story.

def parse_instant(s: str) -> datetime:
    if "T" in s:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


class Invalid(Exception):
    pass


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise Invalid(msg)


def build() -> tuple[list[Line], list[Line]]:
    """The demo lines and the evidence records, both checked."""
    ontology = tomllib.loads(ONTOLOGY.read_text(encoding="utf-8"))
    registry = tomllib.loads(PREDICATES.read_text(encoding="utf-8"))
    etypes = ontology["entity_types"]
    edges = ontology["edge_types"]
    preds = registry["predicates"]

    # Entities.
    types: dict[str, str] = {}
    names_seen: dict[str, str] = {}
    lines: list[Line] = []
    for etype, name, desc, aliases in ENTITIES:
        check(etype in etypes, f"unknown entity type {etype}")
        check(name.isascii(), f"non-ASCII name {name!r}")
        ref = f"{etype.lower()}:{slug(name)}"
        check(ref not in types, f"duplicate entity {ref}")
        types[ref] = etype
        check(desc.endswith(".") and desc.count(". ") == 0, f"{ref}: description must be one sentence")
        for label in [name, *aliases]:
            k = label.casefold()
            check(k not in names_seen, f"name or alias {label!r} of {ref} already used by {names_seen.get(k)}")
            names_seen[k] = ref
        line: Line = {"op": "entity", "type": etype, "name": name}
        if aliases:
            line["aliases"] = aliases
        line["description"] = desc
        lines.append(line)

    def check_object(where: str, stype: str, pred: str, spec: dict[str, Any], obj: Any) -> None:
        o = spec["object"]
        if "entity_types" in o:
            check(isinstance(obj, str) and obj in types, f"{where}: unknown entity {obj!r}")
            otype = types[obj]
            check(otype in o["entity_types"], f"{where}: {pred} does not take a {otype}")
            pairs = {tuple(p) for p in edges[spec["edge"]]["pairs"]}
            check((stype, otype) in pairs, f"{where}: edge {spec['edge']} has no pair ({stype}, {otype})")
            return
        kind = o["type"]
        if kind == "enum":
            check(obj in o["values"], f"{where}: {obj!r} not in {o['values']}")
        elif kind == "date":
            check(isinstance(obj, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", obj) is not None,
                  f"{where}: {obj!r} is not a date")
            date.fromisoformat(obj)
        elif kind == "url":
            check(isinstance(obj, str) and obj.startswith("https://"), f"{where}: {obj!r} is not a URL")
        elif kind == "string":
            check(isinstance(obj, str) and obj != "" and "\n" not in obj, f"{where}: bad string")
        elif kind == "text":
            check(isinstance(obj, str) and obj.strip() != "", f"{where}: empty text")
        else:
            raise Invalid(f"{where}: literal type {kind} not used by the demo")

    # Statements: sort by record time (stable), then number.
    journal = history()

    def rec_time(item: Line) -> datetime:
        line = item["line"]
        return parse_instant(line["at"] if line["op"] == "retract" else line["recorded_at"])

    items = sorted(journal.items, key=rec_time)
    numbered: dict[str, tuple[int, Line]] = {}
    n = 0
    for item in items:
        line = item["line"]
        if line["op"] in ("assert", "end"):
            n += 1
            item["fact"] = n
            if item["key"]:
                numbered[item["key"]] = (n, line)
    statements = [i for i in items if i["line"]["op"] in ("assert", "end")]
    retracts = [i for i in items if i["line"]["op"] == "retract"]

    # Evidence records: numbered, checked, and cited by the assertions they support.
    recs = records()
    check_records(recs)
    cite_records(recs, statements)
    rec_ts = {r["ref"]: parse_instant(r["ts"]) for r in recs}

    for item in statements:
        line = item["line"]
        where = f"fact:{item['fact']} ({line['subject']} {line['predicate']})"
        pred = line["predicate"]
        check(pred in preds, f"{where}: unknown predicate")
        spec = preds[pred]
        check(line["subject"] in types, f"{where}: unknown subject")
        stype = types[line["subject"]]
        check(stype in spec["subject_types"], f"{where}: subject type {stype} not allowed")
        rec = parse_instant(line["recorded_at"])
        check(rec < CUTOFF, f"{where}: recorded in the future")
        if line["op"] == "assert":
            check(line["asserted_by"] in ("operator", "agent"), f"{where}: bad asserted_by")
            check_object(where, stype, pred, spec, line["object"])
            vf = parse_instant(line["valid_from"])
            check(vf <= rec, f"{where}: valid_from after recorded_at")
            check(rec - vf < timedelta(days=60), f"{where}: recorded implausibly late")
            if "valid_to" in line:
                check(parse_instant(line["valid_to"]) > vf, f"{where}: valid_to not after valid_from")
                check(spec["cardinality"] == "many", f"{where}: valid_to on a one-valued predicate")
            for s in line["sources"]:
                if s.startswith("rec:"):
                    check(s in rec_ts, f"{where}: cites {s}, which is not in {REC_OUT.name}")
                    check(rec_ts[s] <= rec, f"{where}: cites {s}, written after the fact was recorded")
                else:
                    check(s.startswith("https://"), f"{where}: source {s!r} is neither rec:N nor an external URI")
        else:
            if "object" in line:
                check_object(where, stype, pred, spec, line["object"])
            check(parse_instant(line["at"]) <= rec, f"{where}: end recorded before it takes effect")

    # Every end closes something that holds when it takes effect.
    asserts = [i["line"] for i in statements if i["line"]["op"] == "assert"]
    ends = [i["line"] for i in statements if i["line"]["op"] == "end"]
    for e in ends:
        at = parse_instant(e["at"])
        match = [x for x in asserts
                 if x["subject"] == e["subject"] and x["predicate"] == e["predicate"]
                 and ("object" not in e or x["object"] == e["object"])
                 and parse_instant(x["valid_from"]) < at
                 and ("valid_to" not in x or parse_instant(x["valid_to"]) > at)]
        check(bool(match), f"end {e} closes nothing")

    # No duplicates.
    keys = Counter((x["subject"], x["predicate"], str(x["object"]), x["valid_from"], x.get("valid_to"))
                   for x in asserts)
    dups = [k for k, c in keys.items() if c > 1]
    check(not dups, f"duplicate assertions: {dups}")

    # Exactly one retraction, of a real assertion, after it was recorded.
    check(len(retracts) == 1, "the demo has exactly one retraction")
    for item in retracts:
        fact_n, target = numbered[item["key"]]
        check(target["op"] == "assert", "retraction must target an assertion")
        item["line"]["fact"] = f"fact:{fact_n}"
        at = parse_instant(item["line"]["at"])
        check(parse_instant(target["recorded_at"]) < at < CUTOFF, "retraction time out of range")
    retracted = {numbered[i["key"]][0] for i in retracts}

    # Exactly one single-value conflict (same subject/predicate/valid_from, different values).
    groups: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for item in statements:
        x = item["line"]
        if x["op"] == "assert" and item["fact"] not in retracted and preds[x["predicate"]]["cardinality"] == "one":
            groups[(x["subject"], x["predicate"], x["valid_from"])].add(str(x["object"]))
    conflicts = [k for k, v in groups.items() if len(v) > 1]
    check(conflicts == [("project:compass", "priority", "2026-02-02")], f"conflicts: {conflicts}")

    # Record order.
    times = [rec_time(i) for i in items]
    check(times == sorted(times), "lines are not in record-time order")

    # Sources: about 15% of assertions have none.
    nosrc = sum(1 for x in asserts if not x["sources"])
    ratio = nosrc / len(asserts)
    check(0.10 <= ratio <= 0.20, f"{ratio:.0%} of assertions lack sources (want about 15%)")
    # ... and about half of the sourced ones cite a record.
    sourced = [x for x in asserts if x["sources"]]
    with_rec = sum(1 for x in sourced if any(s.startswith("rec:") for s in x["sources"]))
    check(0.40 <= with_rec / len(sourced) <= 0.60,
          f"{with_rec / len(sourced):.0%} of sourced assertions cite a record (want about half)")
    # The retracted assertion keeps only its chat link (the walkthrough shows it as is).
    for item in retracts:
        check(not any(s.startswith("rec:") for s in numbered[item["key"]][1]["sources"]),
              "the retracted assertion cites no record")

    # Every entity is used; the span is 2025-01 .. 2026-10.
    used = set()
    for x in asserts + ends:
        used.add(x["subject"])
        if x.get("object") in types:
            used.add(x["object"])
    check(used == set(types), f"unused entities: {sorted(set(types) - used)}")
    check(min(x["valid_from"] for x in asserts).startswith("2025-01"), "history starts in 2025-01")
    check(max(x["recorded_at"] for x in asserts).startswith("2026-10"), "history ends in 2026-10")

    out = lines + [i["line"] for i in items]
    check(150 <= len(out) <= 250, f"{len(out)} lines (want 150-250)")

    story_checks(statements, retracts)
    return out, recs


# --------------------------------------------------------------------------
# A tiny resolver (section 4 of the spec, simplified to what the demo uses)
# to pin down the answers the demo walkthrough shows.

def _visible(statements: list[Line], retracts: list[Line], known_at: datetime) -> list[Line]:
    gone = {r["line"]["fact"]: parse_instant(r["line"]["at"]) for r in retracts}
    out = []
    for item in statements:
        x = item["line"]
        if parse_instant(x["recorded_at"]) > known_at:
            continue
        r = gone.get(f"fact:{item['fact']}")
        if r is not None and r <= known_at:
            continue
        out.append(x)
    return out


def holds(statements: list[Line], retracts: list[Line], subject: str, predicate: str, as_of: str, known_at: str,
          one: bool) -> Any:
    A, K = parse_instant(as_of), parse_instant(known_at)
    vis = _visible(statements, retracts, K)
    mine = [x for x in vis if x["subject"] == subject and x["predicate"] == predicate]
    ends = [x for x in mine if x["op"] == "end"]
    asserts = [x for x in mine if x["op"] == "assert"]

    def ended(obj: Any, start: datetime) -> datetime | None:
        ts = [parse_instant(e["at"]) for e in ends
              if ("object" not in e or e["object"] == obj) and parse_instant(e["at"]) >= start]
        return min(ts) if ts else None

    if one:
        ordered = sorted(asserts, key=lambda x: (parse_instant(x["valid_from"]), parse_instant(x["recorded_at"])))
        current = [x for x in ordered if parse_instant(x["valid_from"]) <= A]
        if not current:
            return None
        x = current[-1]
        stop = ended(x["object"], parse_instant(x["valid_from"]))
        return None if stop is not None and stop <= A else x["object"]
    result = set()
    for x in asserts:
        start = parse_instant(x["valid_from"])
        stops = [t for t in (ended(x["object"], start),
                             parse_instant(x["valid_to"]) if "valid_to" in x else None) if t is not None]
        if start <= A and (not stops or min(stops) > A):
            result.add(x["object"])
    return sorted(result)


NOW = "2026-11-01T00:00:00Z"

# (subject, predicate, as_of, known_at, cardinality one?, expected)
EXPECTED = [
    ("project:atlas", "uses", "2025-06-01", NOW, False, ["repo:graph-core", "tool:neo4j"]),
    ("project:atlas", "uses", NOW, NOW, False, ["repo:graph-core", "tool:kuzu"]),
    ("project:beacon", "uses", "2025-06-01", NOW, False,
     ["repo:search-service", "tool:elasticsearch", "tool:fastapi", "tool:postgresql"]),
    ("project:beacon", "uses", NOW, NOW, False,
     ["repo:search-service", "tool:fastapi", "tool:kubernetes", "tool:postgresql", "tool:tantivy"]),
    ("project:beacon", "blocked_by", "2025-05-01", NOW, False, ["project:harbor"]),
    ("project:beacon", "blocked_by", NOW, NOW, False, []),
    ("project:atlas", "owner", "2025-09-05", "2025-09-05T00:00:00Z", True, "person:tomas-ortega"),
    ("project:atlas", "owner", "2025-09-05", NOW, True, "person:maya-chen"),
    ("project:atlas", "owner", NOW, NOW, True, "person:jonas-weber"),
    ("project:ferry", "status", "2026-04-20", "2026-05-01T00:00:00Z", True, "active"),
    ("project:ferry", "status", "2026-04-20", NOW, True, "paused"),
    ("project:quill", "status", "2026-09-20", "2026-09-20T00:00:00Z", True, "active"),
    ("project:quill", "status", NOW, NOW, True, "blocked"),
    ("project:compass", "priority", NOW, NOW, True, "p2"),
    ("project:atlas", "deadline", NOW, NOW, True, None),
    ("project:atlas", "deadline", "2026-04-15", NOW, True, "2026-06-30"),
    ("project:sextant", "evaluates", "2025-12-01", NOW, False, ["tool:kuzu", "tool:qdrant"]),
    ("project:sextant", "evaluates", NOW, NOW, False, []),
]

CURRENT_STATUS = {
    "project:atlas": "active", "project:beacon": "done", "project:compass": "active",
    "project:ledger": "done", "project:harbor": "archived", "project:quill": "blocked",
    "project:lighthouse": "archived", "project:ferry": "paused", "project:sextant": "paused",
    "project:drydock": "done", "project:tidewater": "active", "project:anchor": "done",
}


def story_checks(statements: list[Line], retracts: list[Line]) -> None:
    for subject, predicate, as_of, known_at, one, want in EXPECTED:
        got = holds(statements, retracts, subject, predicate, as_of, known_at, one)
        check(got == want, f"{subject} {predicate} at {as_of} known {known_at}: got {got}, want {want}")
    for subject, want in CURRENT_STATUS.items():
        got = holds(statements, retracts, subject, "status", NOW, NOW, True)
        check(got == want, f"current status of {subject}: got {got}, want {want}")


def texts(out: list[Line], recs: list[Line]) -> dict[Path, str]:
    """The two data files as ``build`` makes them, by where the package keeps them."""
    return {OUT: "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in out),
            REC_OUT: "".join(json.dumps(record_line(r), ensure_ascii=False) + "\n" for r in recs)}


def stale() -> list[Path]:
    """The shipped data files that differ from what ``build`` makes (none when they are current)."""
    return [path for path, text in texts(*build()).items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the shipped files are not current")
    a = ap.parse_args(argv)
    if a.check:
        old = stale()
        for path in old:
            print(f"{path} differs from what tools/make_demo.py builds; run it to write it again")
        return 1 if old else 0
    out, recs = build()
    for path, text in texts(out, recs).items():
        path.write_text(text, encoding="utf-8")
    ops = Counter(line["op"] for line in out)
    retract = next(line for line in out if line["op"] == "retract")
    print(f"wrote {OUT} ({len(out)} lines: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())) + ")")
    print(f"retracts {retract['fact']}: {retract['reason']}")
    asserts = [line for line in out if line["op"] == "assert"]
    citing = sum(1 for x in asserts if any(s.startswith("rec:") for s in x["sources"]))
    sourced = sum(1 for x in asserts if x["sources"])
    noise = sum(1 for r in recs if r["supports"] == NOISE)
    print(f"wrote {REC_OUT} ({len(recs)} records, {noise} of them noise); {citing} of {sourced} sourced "
          f"assertions cite a record, {len(asserts) - sourced} have no source")
    return 0


if __name__ == "__main__":
    sys.exit(main())
