"""Entities (one ``entity`` table, typed by a column), the name index (``name``), entity events and
the merge redirects read from them, and the stored linking lexicon (``lexicon_part``, with the
entities changed since it was stored in ``lexicon_change``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from graphmem.model import Entity, EntityEvent
from graphmem.model.words import squash
from graphmem.store.common.codecs import dumps
from graphmem.store.common.events import Redirects, redirects_from
from graphmem.store.postgres.base import PgBase


def _levenshtein(a: str, b: str, cap: int) -> int:
    """Edit distance of ``a`` and ``b`` (characters), or ``cap + 1`` once it is beyond ``cap``."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > cap:
            return cap + 1
        prev = cur
    return prev[-1]


class PgEntities(PgBase):
    """Entities, their names, their events and the stored lexicon."""

    _redirects: tuple[int, Redirects] | None = None

    def entity(self, ref: str) -> Entity | None:
        rows = self._q("SELECT type, name, aliases, description FROM entity WHERE ref = %s", (ref,))
        if not rows:
            return None
        t, name, aliases, desc = rows[0]
        return Entity(ref, t, name, tuple(json.loads(aliases or "[]")), desc or "")

    def refs_named(self, key: str) -> list[str]:
        rows = self._q("SELECT refs FROM name WHERE key = %s", (key.lower(),))
        return json.loads(rows[0][0]) if rows else []

    def names_containing(self, text: str, limit: int = 5) -> list[str]:
        rows = self._q("SELECT refs FROM name WHERE strpos(key, %s) > 0 ORDER BY key LIMIT %s", (text.lower(), limit))
        out: list[str] = []
        for (refs,) in rows:
            for r in json.loads(refs):
                if r not in out:
                    out.append(r)
        return out[:limit]

    def names_near(self, text: str, max_edits: int, limit: int = 50) -> dict[str, list[str]]:
        """Names and aliases whose letters and digits are within about ``max_edits`` edits of ``text``'s
        (a coarse cut the caller ranks): lengths cut in SQL, the distance in Python (no extension needed)."""
        key = squash(text)
        d = 2 * max_edits + 1
        rows = self._q("SELECT key, refs, k FROM (SELECT key, refs, regexp_replace(key, '[^[:alnum:]]', '', 'g') AS k "
                       "FROM name) n WHERE abs(length(k) - %s) <= %s", (len(key), d))
        near = sorted((dist, k, refs) for k, refs, sq in rows if (dist := _levenshtein(sq, key, d)) <= d)
        return {k: json.loads(refs) for _, k, refs in near[:limit]}

    def all_names(self) -> dict[str, list[str]]:
        return {k: json.loads(v) for k, v in self._q("SELECT key, refs FROM name")}

    def entities(self, etype: str | None = None, match: str | None = None) -> list[Entity]:
        out: list[Entity] = []
        for t in ([etype] if etype else sorted(self.ontology.entity_types)):
            sql, params = "SELECT ref, name, aliases, description FROM entity WHERE type = %s", [t]
            if match:
                sql += " AND (strpos(lower(name), %s) > 0 OR strpos(lower(aliases), %s) > 0 OR strpos(ref, %s) > 0)"
                params += [match.lower()] * 3
            rows = self._q(sql + " ORDER BY ref", params)
            out.extend(Entity(r, t, n, tuple(json.loads(a or "[]")), d or "") for r, n, a, d in rows)
        return out

    def add_entity(self, e: Entity, created_at: int) -> None:
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        self._undo.entities.append(e.ref)
        self._w("INSERT INTO entity(ref, type, name, aliases, description, created_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (e.ref, e.type, e.name, dumps(list(e.aliases)), e.description, created_at))
        self._index_names(e, e.aliases)

    def _remember_entity(self, e: Entity) -> None:
        if e.ref not in self._undo.entities:
            self._undo.entities_before.setdefault(e.ref, [list(e.aliases), e.description, e.name])

    def add_aliases(self, e: Entity, new_aliases: tuple[str, ...], description: str | None) -> None:
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        aliases = list(e.aliases) + [a for a in new_aliases if a not in e.aliases]
        self._remember_entity(e)
        if description:
            self._w("UPDATE entity SET aliases = %s, description = %s WHERE ref = %s", (dumps(aliases), description, e.ref))
        else:
            self._w("UPDATE entity SET aliases = %s WHERE ref = %s", (dumps(aliases), e.ref))
        self._index_names(e, tuple(a for a in new_aliases if a not in e.aliases), with_name=False)

    def rename_entity(self, e: Entity, name: str) -> None:
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        self._remember_entity(e)
        self._w("UPDATE entity SET name = %s WHERE ref = %s", (name, e.ref))
        self._unindex_names(e, [e.name], keep=[name, *e.aliases])
        self._index_names(Entity(e.ref, e.type, name), ())

    def remove_aliases(self, e: Entity, gone: tuple[str, ...]) -> None:
        self.entity_writes += 1
        self._lexicon_touch([e.ref])
        self._remember_entity(e)
        kept = [a for a in e.aliases if a not in gone]
        self._w("UPDATE entity SET aliases = %s WHERE ref = %s", (dumps(kept), e.ref))
        self._unindex_names(e, gone, keep=[e.name, *kept])

    def _put_name(self, key: str, refs: list[str]) -> None:
        self._w("INSERT INTO name(key, refs) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET refs = EXCLUDED.refs",
                (key, dumps(sorted(refs))))

    def _unindex_names(self, e: Entity, names: Iterable[str], keep: Iterable[str]) -> None:
        kept = {k.lower() for k in keep}
        for key in dict.fromkeys(k.lower() for k in names):
            if key in kept:
                continue
            refs = [r for r in self.refs_named(key) if r != e.ref]
            if refs:
                self._put_name(key, refs)
            else:
                self._w("DELETE FROM name WHERE key = %s", (key,))

    def _index_names(self, e: Entity, aliases: Iterable[str], with_name: bool = True) -> None:
        keys = ([e.name] if with_name else []) + list(aliases)
        for key in dict.fromkeys(k.lower() for k in keys):
            refs = self.refs_named(key)
            if e.ref not in refs:
                self._put_name(key, [*refs, e.ref])

    def bulk_add_entities(self, entities: list[Entity], created_at: int) -> None:
        """Many new entities at once: COPY, then the name index merged."""
        self.entity_writes += 1
        if len(entities) <= 50:
            for e in entities:
                self.add_entity(e, created_at)
            return
        self._lexicon_drop()
        self._undo.entities.extend(e.ref for e in entities)
        self._copy("entity", "ref, type, name, aliases, description, created_at",
                   ((e.ref, e.type, e.name, dumps(list(e.aliases)), e.description, created_at) for e in entities))
        existing = self.all_names()
        changed: dict[str, list[str]] = {}
        for e in entities:
            for key in dict.fromkeys(k.lower() for k in (e.name, *e.aliases)):
                refs = changed.get(key) or existing.get(key, [])
                if e.ref not in refs:
                    changed[key] = [*refs, e.ref]
        self._many("INSERT INTO name(key, refs) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET refs = EXCLUDED.refs",
                   [(k, dumps(sorted(v))) for k, v in changed.items()])

    def entity_count(self) -> int:
        return int(self._q("SELECT count(*) FROM entity")[0][0])

    def all_entities(self) -> Iterator[Entity]:
        for t, r, n, a, d in self._iter("SELECT type, ref, name, aliases, description FROM entity "
                                        "ORDER BY type, created_at, ref"):
            yield Entity(r, t, n, tuple(json.loads(a or "[]")), d or "")

    def entity_names(self) -> dict[str, str]:
        return self.entity_names_and_types()[0]

    def entity_names_and_types(self) -> tuple[dict[str, str], dict[str, str]]:
        names: dict[str, str] = {}
        types: dict[str, str] = {}
        for r, n, t in self._iter("SELECT ref, name, type FROM entity"):
            names[r] = n
            types[r] = t
        return names, types

    # entity events ------------------------------------------------------------------

    def next_event_id(self) -> int:
        self._ticket()
        return int(self._q("SELECT coalesce(max(id), 0) + 1 FROM entity_event")[0][0])

    def add_entity_event(self, ev: EntityEvent) -> None:
        if self._undo.events_from is None or ev.id < self._undo.events_from:
            self._undo.events_from = ev.id
        self._redirects = None
        self._w("INSERT INTO entity_event(id, op, ref, other, detail, recorded_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (ev.id, ev.op, ev.ref, ev.other, dumps(ev.detail), ev.recorded_at))

    def entity_events(self, ref: str | None = None) -> list[EntityEvent]:
        cols = "SELECT id, op, ref, other, detail, recorded_at FROM entity_event"
        rows = (self._q(cols + " WHERE ref = %s OR other = %s ORDER BY id", (ref, ref)) if ref is not None
                else self._q(cols + " ORDER BY id"))
        return [EntityEvent(i, op, r, o, json.loads(d or "{}"), at) for i, op, r, o, d, at in rows]

    def entity_event(self, event_id: int) -> EntityEvent | None:
        rows = self._q("SELECT id, op, ref, other, detail, recorded_at FROM entity_event WHERE id = %s", (event_id,))
        return next((EntityEvent(i, op, r, o, json.loads(d or "{}"), at) for i, op, r, o, d, at in rows), None)

    def redirects(self) -> Redirects:
        """Each merged ref with the entity it resolves to and over which record times (kept while no
        process has written an entity event: the newest event id is checked on each call)."""
        top = int(self._q("SELECT coalesce(max(id), 0) FROM entity_event")[0][0])
        if self._redirects is None or self._redirects[0] != top:
            self._redirects = (top, redirects_from(self._q(
                "SELECT id, op, ref, other, detail, recorded_at FROM entity_event WHERE op IN ('merge', 'unmerge') "
                "ORDER BY id")))
        return self._redirects[1]

    def forget_redirects(self) -> None:
        self._redirects = None

    # the stored linking lexicon ------------------------------------------------------

    def lexicon_parts(self, ids: list[int] | None) -> dict[int, bytes]:
        if not self.meta("lexicon"):
            return {}
        rows = (self._q("SELECT part, data FROM lexicon_part") if ids is None
                else self._q("SELECT part, data FROM lexicon_part WHERE part = ANY(%s)", (list(ids),)))
        return {int(i): bytes(d) for i, d in rows}

    def lexicon_changes(self) -> list[str]:
        return sorted(r[0] for r in self._q("SELECT ref FROM lexicon_change"))

    def store_lexicon(self, parts: dict[int, bytes] | None) -> None:
        """Store ``parts`` as the lexicon (None: none) and forget the changes, in one transaction."""
        self.check_writable("store the linking lexicon")
        with self.transaction():
            self._w("DELETE FROM lexicon_part")
            self._w("DELETE FROM lexicon_change")
            if parts:
                self._copy("lexicon_part", "part, data", sorted(parts.items()))
            self._set_meta("lexicon", "1" if parts else "")

    def _lexicon_touch(self, refs: Iterable[str]) -> None:
        self._many("INSERT INTO lexicon_change(ref) VALUES (%s) ON CONFLICT DO NOTHING", [(r,) for r in dict.fromkeys(refs)])

    def _lexicon_drop(self) -> None:
        self._set_meta("lexicon", "")
        self._w("DELETE FROM lexicon_change")

    def _entity_types_of(self, refs: list[str]) -> dict[str, str]:
        return {r: t for r, t in self._q("SELECT ref, type FROM entity WHERE ref = ANY(%s)", (refs,))}
