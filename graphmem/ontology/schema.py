"""The ontology (entity and edge types) and the predicate registry, loaded from TOML.

Files are validated once, here, at the edge: every error names the file and the
entry. Everything downstream trusts these values, including the store, which
uses type names as Cypher labels.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from graphmem.errors import ConfigError
from graphmem.model.times import parse_duration

# ISO-8601 durations; checked at load, converted by pendulum only when lint needs it
_DURATION_RE = re.compile(r"^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$")

LITERAL_TYPES = ("string", "text", "enum", "int", "float", "bool", "date", "url")
CARDINALITIES = ("one", "many")
RECORD_TYPE = "Record"  # the evidence node; edge pairs may name it
_TYPE_RE = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_EDGE_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PRED_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_RESERVED = {"Meta", "Name", "Assertion", "Subject", "SubjectFacet", RECORD_TYPE}


@dataclass(frozen=True)
class EntityType:
    name: str
    description: str

    @property
    def prefix(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class EdgeType:
    name: str
    description: str
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Ontology:
    entity_types: dict[str, EntityType]
    edge_types: dict[str, EdgeType]
    by_prefix: dict[str, str] = field(default_factory=dict)

    def type_for_prefix(self, prefix: str) -> str | None:
        return self.by_prefix.get(prefix)

    def fingerprint(self) -> dict[str, Any]:
        return {
            "entity_types": sorted(self.entity_types),
            "edge_types": {n: sorted(map(list, e.pairs)) for n, e in sorted(self.edge_types.items())},
        }


@dataclass(frozen=True)
class Predicate:
    name: str
    description: str
    subject_types: tuple[str, ...]
    cardinality: str
    object_entity_types: tuple[str, ...] = ()
    literal_type: str | None = None
    enum_values: tuple[str, ...] = ()
    edge: str | None = None
    aliases: tuple[str, ...] = ()
    stale_after: str | None = None
    stale_exempt: tuple[str, ...] = ()

    @property
    def stale_after_us(self) -> int | None:
        return None if self.stale_after is None else parse_duration(self.stale_after, what="stale_after")

    @property
    def entity_valued(self) -> bool:
        return self.literal_type is None

    def object_description(self) -> str:
        if self.entity_valued:
            return "an entity of type " + " or ".join(self.object_entity_types)
        if self.literal_type == "enum":
            return "one of " + ", ".join(self.enum_values)
        return f"a {self.literal_type}"

    def view_signature(self) -> list[Any]:
        """What the materialized view depends on; a change needs a rebuild."""
        return [self.cardinality, self.literal_type, list(self.object_entity_types), self.edge]


@dataclass(frozen=True)
class Registry:
    predicates: dict[str, Predicate]
    aliases: dict[str, str]

    def fingerprint(self) -> dict[str, Any]:
        return {n: p.view_signature() for n, p in sorted(self.predicates.items())}


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def _toml_files(kind: str, dirs: tuple[Path, ...]) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    default = resources.files("graphmem").joinpath(kind)
    for entry in sorted(default.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out.append((f"{kind}/{entry.name}", _parse(f"{kind}/{entry.name}", entry.read_text("utf-8"))))
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            raise ConfigError(f"{kind} directory {str(d)!r} does not exist")
        for path in sorted(d.glob("*.toml")):
            out.append((str(path), _parse(str(path), path.read_text("utf-8"))))
    return out


def _parse(name: str, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{name}: not valid TOML: {e}") from None


def load_ontology(dirs: tuple[Path, ...] = ()) -> Ontology:
    """The default ontology plus every ``*.toml`` in ``dirs``, validated."""
    entity_types: dict[str, EntityType] = {}
    edges: dict[str, EdgeType] = {}
    raw_edges: list[tuple[str, str, dict[str, Any]]] = []
    for fname, doc in _toml_files("ontology", dirs):
        unknown = set(doc) - {"entity_types", "edge_types"}
        if unknown:
            raise ConfigError(f"{fname}: unknown section {sorted(unknown)[0]!r}; expected entity_types, edge_types")
        for tname, spec in doc.get("entity_types", {}).items():
            where = f"{fname}: entity type {tname!r}"
            if not _TYPE_RE.match(tname) or tname in _RESERVED:
                raise ConfigError(f"{where}: expected a CamelCase name that is not reserved ({', '.join(sorted(_RESERVED))})")
            if tname in entity_types:
                raise ConfigError(f"{where}: duplicate entity type")
            if not isinstance(spec, dict):
                raise ConfigError(f"{where}: expected a table")
            entity_types[tname] = EntityType(tname, str(spec.get("description", "")))
        for ename, spec in doc.get("edge_types", {}).items():
            raw_edges.append((fname, ename, spec))
    prefixes: dict[str, str] = {}
    for t in entity_types.values():
        if t.prefix in prefixes:
            raise ConfigError(f"entity types {prefixes[t.prefix]!r} and {t.name!r} share the ref prefix {t.prefix!r}")
        prefixes[t.prefix] = t.name
    for fname, ename, spec in raw_edges:
        where = f"{fname}: edge type {ename!r}"
        if not _EDGE_RE.match(ename):
            raise ConfigError(f"{where}: expected an UPPER_CASE name")
        if ename in edges:
            raise ConfigError(f"{where}: duplicate edge type")
        if not isinstance(spec, dict) or not isinstance(spec.get("pairs"), list) or not spec["pairs"]:
            raise ConfigError(f"{where}: expected 'pairs', a non-empty list of [from, to] type names")
        pairs: list[tuple[str, str]] = []
        for pair in spec["pairs"]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ConfigError(f"{where}: bad pair {pair!r}; expected [from type, to type]")
            for t in pair:
                if t not in entity_types and t != RECORD_TYPE:
                    raise ConfigError(f"{where}: pair {pair!r} names unknown entity type {t!r}")
            if pair[1] == RECORD_TYPE:
                raise ConfigError(f"{where}: pair {pair!r}: records can only be the source of an edge")
            if (pair[0], pair[1]) not in pairs:
                pairs.append((pair[0], pair[1]))
        if any(a == RECORD_TYPE for a, _ in pairs) and not all(a == RECORD_TYPE for a, _ in pairs):
            raise ConfigError(f"{where}: an edge type goes either from records (evidence) or between entities, not both")
        edges[ename] = EdgeType(ename, str(spec.get("description", "")), tuple(pairs))
    return Ontology(entity_types, edges, prefixes)


def load_registry(ontology: Ontology, dirs: tuple[Path, ...] = ()) -> Registry:
    """The default predicates plus every ``*.toml`` in ``dirs``, checked against ``ontology``."""
    preds: dict[str, Predicate] = {}
    aliases: dict[str, str] = {}
    for fname, doc in _toml_files("predicates", dirs):
        unknown = set(doc) - {"predicates"}
        if unknown:
            raise ConfigError(f"{fname}: unknown section {sorted(unknown)[0]!r}; expected predicates")
        for pname, spec in doc.get("predicates", {}).items():
            p = _predicate(fname, pname, spec, ontology)
            if pname in preds:
                raise ConfigError(f"{fname}: predicate {pname!r}: duplicate predicate name")
            preds[pname] = p
    for p in preds.values():
        for a in (p.name.replace("_", " "), *p.aliases):
            key = a.strip().lower()
            if key in preds and preds[key] is not p:
                continue  # a predicate's own name wins over another's alias
            aliases.setdefault(key, p.name)
    return Registry(preds, aliases)


def _predicate(fname: str, pname: str, spec: Any, ont: Ontology) -> Predicate:
    where = f"{fname}: predicate {pname!r}"
    if not _PRED_RE.match(pname):
        raise ConfigError(f"{where}: expected a snake_case name")
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a table")
    known = {"description", "subject_types", "object", "cardinality", "edge", "aliases", "stale_after", "stale_exempt"}
    extra = set(spec) - known
    if extra:
        raise ConfigError(f"{where}: unknown field {sorted(extra)[0]!r}; expected {', '.join(sorted(known))}")
    subj = spec.get("subject_types")
    if not isinstance(subj, list) or not subj:
        raise ConfigError(f"{where}: expected 'subject_types', a non-empty list of entity types")
    for t in subj:
        if t not in ont.entity_types:
            raise ConfigError(f"{where}: unknown subject type {t!r}; known: {', '.join(sorted(ont.entity_types))}")
    card = spec.get("cardinality")
    if card not in CARDINALITIES:
        raise ConfigError(f"{where}: bad cardinality {card!r}; expected 'one' or 'many'")
    obj = spec.get("object")
    if not isinstance(obj, dict):
        raise ConfigError(f"{where}: expected 'object', a table with 'type' or 'entity_types'")
    aliases = spec.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise ConfigError(f"{where}: expected 'aliases', a list of non-empty strings")
    stale = spec.get("stale_after")
    if stale is not None and not (isinstance(stale, str) and _DURATION_RE.match(stale)):
        raise ConfigError(f"{where}: bad stale_after {stale!r}; expected an ISO-8601 duration such as P90D")
    exempt = spec.get("stale_exempt", [])
    if not isinstance(exempt, list) or not all(isinstance(v, str) for v in exempt):
        raise ConfigError(f"{where}: bad stale_exempt {exempt!r}; expected a list of values that never go stale")
    common = dict(
        name=pname, description=str(spec.get("description", "")), subject_types=tuple(subj),
        cardinality=card, aliases=tuple(a.strip().lower() for a in aliases),
        stale_after=stale, stale_exempt=tuple(exempt),
    )
    if "entity_types" in obj:
        if "type" in obj:
            raise ConfigError(f"{where}: object has both 'type' and 'entity_types'")
        ots = obj["entity_types"]
        if not isinstance(ots, list) or not ots:
            raise ConfigError(f"{where}: expected object.entity_types, a non-empty list")
        for t in ots:
            if t not in ont.entity_types:
                raise ConfigError(f"{where}: unknown object type {t!r}; known: {', '.join(sorted(ont.entity_types))}")
        edge = spec.get("edge")
        if edge not in ont.edge_types:
            raise ConfigError(
                f"{where}: unknown edge type {edge!r}; entity-valued predicates need 'edge', one of "
                + ", ".join(sorted(ont.edge_types))
            )
        pairs = set(ont.edge_types[edge].pairs)
        if any(RECORD_TYPE in p for p in pairs):
            raise ConfigError(f"{where}: edge type {edge!r} links records to entities; a predicate needs an entity edge")
        if not any((s, o) in pairs for s in subj for o in ots):
            raise ConfigError(f"{where}: edge type {edge!r} allows none of its subject/object type pairs")
        return Predicate(**common, object_entity_types=tuple(ots), edge=edge)
    lt = obj.get("type")
    if lt not in LITERAL_TYPES:
        raise ConfigError(f"{where}: bad literal type {lt!r}; expected one of {', '.join(LITERAL_TYPES)}")
    if spec.get("edge") is not None:
        raise ConfigError(f"{where}: a literal-valued predicate cannot have an edge")
    values: tuple[str, ...] = ()
    if lt == "enum":
        vals = obj.get("values")
        if not isinstance(vals, list) or not vals or not all(isinstance(v, str) for v in vals):
            raise ConfigError(f"{where}: an enum needs 'values', a non-empty list of strings")
        values = tuple(vals)
    return Predicate(**common, literal_type=lt, enum_values=values)
