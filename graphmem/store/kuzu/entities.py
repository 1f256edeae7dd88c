"""Entities (one node table per entity type) and the name index (``Name``) that resolves names
and aliases to refs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from graphmem.model import Entity
from graphmem.model.words import squash
from graphmem.store.common.codecs import dumps
from graphmem.store.kuzu.base import WAL_ROWS, _int
from graphmem.store.kuzu.codecs import _ts, _ts_param
from graphmem.store.kuzu.lexicon import LexiconTables

_NAME = "MATCH (n:Name {key: $k}) RETURN n.refs"


class EntityTables(LexiconTables):
    """Entities and their names."""

    def entity(self, ref: str) -> Entity | None:
        prefix, _, _ = ref.partition(":")
        etype = self.ontology.type_for_prefix(prefix)
        if etype is None:
            return None
        rows = self._q(f"MATCH (e:{etype} {{ref: $r}}) RETURN e.name, e.aliases, e.description", {"r": ref}, hot=True)
        if not rows:
            return None
        name, aliases, desc = rows[0]
        return Entity(ref, etype, name, tuple(json.loads(aliases or "[]")), desc or "")

    def refs_named(self, key: str) -> list[str]:
        rows = self._q(_NAME, {"k": key.lower()})
        return json.loads(rows[0][0]) if rows else []

    def names_containing(self, text: str, limit: int = 5) -> list[str]:
        rows = self._q("MATCH (n:Name) WHERE n.key CONTAINS $t RETURN n.refs ORDER BY n.key LIMIT " + _int(limit),
                       {"t": text.lower()})
        out: list[str] = []
        for (refs,) in rows:
            for r in json.loads(refs):
                if r not in out:
                    out.append(r)
        return out[:limit]

    def names_near(self, text: str, max_edits: int, limit: int = 50) -> dict[str, list[str]]:
        """Names and aliases (lower-cased) whose letters and digits are within about ``max_edits``
        edits of those of ``text``, with their refs: a coarse cut by Kuzu's Levenshtein distance
        (bytes, a swap counted twice), which the caller ranks (``graphmem.model.words.near``)."""
        key = squash(text)
        # the pattern is a literal: as a parameter Kuzu compiles it again for every row (9 s at 10k names)
        rows = self._q("MATCH (n:Name) WITH n, regexp_replace(n.key, '[^\\\\pL\\\\pN]', '', 'g') AS k "
                       "WHERE abs(size(k) - $n) <= $d AND levenshtein(k, $t) <= $d "
                       "RETURN n.key, n.refs ORDER BY levenshtein(k, $t), n.key LIMIT " + _int(limit),
                       {"t": key, "n": len(key), "d": 2 * max_edits + 1})
        return {k: json.loads(v) for k, v in rows}

    def all_names(self) -> dict[str, list[str]]:
        return {k: json.loads(v) for k, v in self._q("MATCH (n:Name) RETURN n.key, n.refs")}

    def entities(self, etype: str | None = None, match: str | None = None) -> list[Entity]:
        out: list[Entity] = []
        for t in ([etype] if etype else sorted(self.ontology.entity_types)):
            where, params = "", {}
            if match:
                where = "WHERE lower(e.name) CONTAINS $m OR lower(e.aliases) CONTAINS $m OR e.ref CONTAINS $m "
                params = {"m": match.lower()}
            rows = self._q(f"MATCH (e:{t}) {where}RETURN e.ref, e.name, e.aliases, e.description ORDER BY e.ref",
                           params)
            out.extend(Entity(r, t, n, tuple(json.loads(a or "[]")), d or "") for r, n, a, d in rows)
        return out

    def add_entity(self, e: Entity, created_at: int) -> None:
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        self._undo.entities.append(e.ref)
        self._q(f"CREATE (:{e.type} {{ref: $r, name: $n, aliases: $a, description: $d, created_at: $c}})",
                {"r": e.ref, "n": e.name, "a": dumps(list(e.aliases)), "d": e.description,
                 "c": _ts_param(created_at)})
        self._index_names(e, e.aliases)

    def add_aliases(self, e: Entity, new_aliases: tuple[str, ...], description: str | None) -> None:
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        aliases = list(e.aliases) + [a for a in new_aliases if a not in e.aliases]
        self._remember_entity(e)
        params: dict[str, Any] = {"r": e.ref, "a": dumps(aliases)}
        sets = "e.aliases = $a"
        if description:
            sets += ", e.description = $d"
            params["d"] = description
        self._q(f"MATCH (e:{e.type} {{ref: $r}}) SET {sets}", params)
        self._index_names(e, tuple(a for a in new_aliases if a not in e.aliases), with_name=False)

    def _remember_entity(self, e: Entity) -> None:
        """Keep what a stored entity was before this write changes it (``roll_back``)."""
        if e.ref not in self._undo.entities:
            self._undo.entities_before.setdefault(e.ref, [list(e.aliases), e.description, e.name])

    def rename_entity(self, e: Entity, name: str) -> None:
        """Give a stored entity another name (its ref stays); the name index follows."""
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        self._remember_entity(e)
        self._q(f"MATCH (e:{e.type} {{ref: $r}}) SET e.name = $n", {"r": e.ref, "n": name})
        self._unindex_names(e, [e.name], keep=[name, *e.aliases])
        self._index_names(Entity(e.ref, e.type, name), ())

    def remove_aliases(self, e: Entity, gone: tuple[str, ...]) -> None:
        """Take aliases off a stored entity; the name index follows."""
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        self._remember_entity(e)
        kept = [a for a in e.aliases if a not in gone]
        self._q(f"MATCH (e:{e.type} {{ref: $r}}) SET e.aliases = $a", {"r": e.ref, "a": dumps(kept)})
        self._unindex_names(e, gone, keep=[e.name, *kept])

    def _unindex_names(self, e: Entity, names: Iterable[str], keep: Iterable[str]) -> None:
        """Take ``e`` off the index keys of ``names`` that none of ``keep`` still has."""
        kept = {k.lower() for k in keep}
        for key in dict.fromkeys(k.lower() for k in names):
            if key in kept:
                continue
            refs = [r for r in self.refs_named(key) if r != e.ref]
            if refs:
                self._q("MERGE (n:Name {key: $k}) SET n.refs = $v", {"k": key, "v": dumps(sorted(refs))})
            else:
                self._q("MATCH (n:Name {key: $k}) DELETE n", {"k": key})

    def _index_names(self, e: Entity, aliases: Iterable[str], with_name: bool = True) -> None:
        keys = ([e.name] if with_name else []) + list(aliases)
        for key in dict.fromkeys(k.lower() for k in keys):
            refs = self.refs_named(key)
            if e.ref not in refs:
                refs.append(e.ref)
                self._q("MERGE (n:Name {key: $k}) SET n.refs = $v", {"k": key, "v": dumps(sorted(refs))})

    def bulk_add_entities(self, entities: list[Entity], created_at: int) -> None:
        """Many new entities at once (refs must be new): COPY, then merge the name index. Up to
        WAL_ROWS go row by row, through Kuzu's log (see bulk_add_statements)."""
        self.entity_writes += 1
        if len(entities) > WAL_ROWS:
            self._lexicon_drop()
        if len(entities) <= WAL_ROWS:
            for e in entities:
                self.add_entity(e, created_at)
            return
        by_type: dict[str, list[Entity]] = {}
        for e in entities:
            by_type.setdefault(e.type, []).append(e)
        self._undo.entities.extend(e.ref for e in entities)
        ts = _ts(created_at)
        for t, es in by_type.items():
            self._copy(t, ([e.ref, e.name, dumps(list(e.aliases)), e.description, ts] for e in es))
        existing = self.all_names()
        fresh: dict[str, list[str]] = {}
        for e in entities:
            for key in dict.fromkeys(k.lower() for k in (e.name, *e.aliases)):
                target = existing.setdefault(key, []) if key in existing else fresh.setdefault(key, [])
                if e.ref not in target:
                    target.append(e.ref)
        for key, refs in existing.items():
            if refs != sorted(refs) or any(r in {e.ref for e in entities} for r in refs):
                self._q("MERGE (n:Name {key: $k}) SET n.refs = $v", {"k": key, "v": dumps(sorted(refs))})
        self._copy("Name", ([k, dumps(sorted(v))] for k, v in fresh.items()))

    def entity_count(self) -> int:
        return sum(self._q(f"MATCH (e:{t}) RETURN count(e)")[0][0] for t in self.ontology.entity_types)

    def all_entities(self) -> Iterator[Entity]:
        for t in sorted(self.ontology.entity_types):
            rows = self._q(f"MATCH (e:{t}) RETURN e.ref, e.name, e.aliases, e.description, e.created_at "
                           "ORDER BY e.created_at, e.ref")
            for r, n, a, d, _ in rows:
                yield Entity(r, t, n, tuple(json.loads(a or "[]")), d or "")

    def entity_names(self) -> dict[str, str]:
        """Every entity's ref and name."""
        return self.entity_names_and_types()[0]

    def entity_names_and_types(self) -> tuple[dict[str, str], dict[str, str]]:
        """Every entity's ref with its name, and with its type (one scan of each entity table)."""
        names: dict[str, str] = {}
        types: dict[str, str] = {}
        for t in sorted(self.ontology.entity_types):
            for r, n in self._iter(f"MATCH (e:{t}) RETURN e.ref, e.name"):
                names[r] = n
                types[r] = t
        return names, types
