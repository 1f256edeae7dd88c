"""What the HTTP service refuses before a request reaches an endpoint: a missing or wrong bearer
token, and what a page on another site can make a browser send (a foreign Host, DNS rebinding, or
a foreign Origin); and what a token bound to scopes may not do (``limit_to_scopes``, docs/scopes.md).
Also the checks of the --allow-host, --allow-origin, --tokens, --scoped-token and bind options."""

from __future__ import annotations

import ipaddress
import reprlib
from collections.abc import Callable
from typing import Any

from graphmem.errors import BadInput, GraphmemError
from graphmem.model.scopes import check_scope, scope_list

LOOPBACK = ("127.0.0.1", "::1", "localhost")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # as a Host header spells them
WILDCARD = ("0.0.0.0", "::", "")


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 60, 60


def show(v: Any) -> str:
    """A value as a message shows it: short, and a nested one only to three levels (it may be deep)."""
    return _REPR.repr(v)


SCOPES_KEY = "graphmem.scopes"  # where BearerAuth leaves a request's token scopes (None: the admin token)


class BearerAuth:
    """Every request must carry ``Authorization: Bearer <token>`` with one of ``tokens`` (401 otherwise).

    ``tokens`` maps each token to the scopes it is bound to, or to None for the admin token (``--token``);
    the request's scopes are left in the ASGI scope under ``SCOPES_KEY`` for the endpoint to apply."""

    def __init__(self, app: Any, tokens: dict[str, tuple[str, ...] | None], error: Callable[[int, str, str], Any]) -> None:
        self.app = app
        self.expected = [(f"Bearer {t}".encode(), scopes) for t, scopes in tokens.items()]
        self.error = error

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import hmac
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            found = False
            scopes: tuple[str, ...] | None = None
            for expected, bound in self.expected:  # each compared in constant time, every one of them
                if hmac.compare_digest(got, expected):
                    found, scopes = True, bound
            if not found:
                resp = self.error(401, "unauthorized", "missing or wrong bearer token: expected 'Authorization: Bearer <token>'")
                await resp(scope, receive, send)
                return
            scope[SCOPES_KEY] = scopes
        await self.app(scope, receive, send)


class ScopeRefused(GraphmemError):
    """A request whose token is bound to scopes asked for something outside them (HTTP 403)."""


def limit_to_scopes(rule: str, params: dict[str, Any], allowed: tuple[str, ...] | None, where: str) -> dict[str, Any]:
    """The parameters of an operation with scope rule ``rule`` (``operations.SCOPE_RULES``) for a request
    whose token is bound to ``allowed`` (None: the admin token, or no token: left as they are).
    ScopeRefused when the request reaches outside them; an operation without a known rule is refused."""
    if allowed is None or rule == "shared":
        return params
    shown = ", ".join(allowed)
    if rule in ("read", "target"):
        asked = params.get("scope")
        if asked is None:
            return {**params, "scope": list(allowed)}
        outside = [s for s in scope_list(asked) or () if s not in allowed]
        if outside:
            raise ScopeRefused(f"scope {outside[0]!r} is outside this token's scopes: expected one of {shown}")
        return params
    if rule in ("write", "records"):
        asked = params.get("scope")
        if asked is not None and check_scope(asked) not in allowed:
            raise ScopeRefused(f"scope {asked!r} is outside this token's scopes: expected one of {shown} "
                               "(a token bound to scopes writes only into them)")
        out = {**params, "scope": asked or allowed[0]}
        if rule == "records":
            out["_scopes"] = list(allowed)
        return out
    raise ScopeRefused(f"{where} is refused for a token bound to scopes ({shown}): it "
                       + ("reads or changes the whole store or its shared entities" if rule == "admin"
                          else "has no scope rule") + "; expected the server's --token")


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")


def check_token(token: object, where: str) -> str:
    """A bearer token: 8 to 512 characters of the token alphabet (RFC 6750: letters, digits, - . _ ~ + / =)."""
    if not isinstance(token, str) or not 8 <= len(token) <= 512 or not set(token) <= _TOKEN_CHARS:
        raise BadInput(f"bad token in {where}: expected 8 to 512 characters: letters, digits and - . _ ~ + / =")
    return token


def parse_scoped_token(value: str) -> tuple[str, tuple[str, ...]]:
    """A --scoped-token value, TOKEN=SCOPE[,SCOPE...]."""
    token, sep, scopes = value.partition("=")
    if not sep or not scopes:
        raise BadInput("bad --scoped-token: expected TOKEN=SCOPE[,SCOPE...] (e.g. s3cret-agent-7=agent:7,project:atlas)")
    return check_token(token, "--scoped-token"), scope_list(scopes, "scope of --scoped-token") or ()


def load_tokens(path: str) -> dict[str, tuple[str, ...]]:
    """The scoped tokens of a --tokens file: TOML with ``[[token]]`` tables of ``token`` and ``scopes``."""
    import tomllib
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise BadInput(f"cannot read --tokens file {path!r}: {e.strerror}; expected a TOML file of [[token]] "
                       "tables") from None
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"bad --tokens file {path!r}: {e}; expected TOML with [[token]] tables") from None
    entries = doc.get("token")
    if not isinstance(entries, list) or not entries or set(doc) != {"token"}:
        raise BadInput(f"bad --tokens file {path!r}: expected only [[token]] tables, each with token and scopes")
    out: dict[str, tuple[str, ...]] = {}
    for i, entry in enumerate(entries, 1):
        where = f"--tokens file {path!r}, entry {i}"
        if not isinstance(entry, dict) or set(entry) != {"token", "scopes"}:
            raise BadInput(f"bad {where}: expected exactly token and scopes")
        token = check_token(entry["token"], where)
        scopes = entry["scopes"]
        if not isinstance(scopes, list) or not scopes:
            raise BadInput(f"bad scopes in {where}: expected a list of at least one scope name")
        if token in out:
            raise BadInput(f"bad {where}: its token is given twice; expected each token once")
        out[token] = scope_list(scopes, f"scope in {where}") or ()
    return out


def _split_host(value: str) -> tuple[str, int | None] | None:
    """A Host header as (name in lower case, IPv6 in brackets; port or None), or None if it is not one."""
    v = value.strip().lower()
    if v.startswith("["):
        end = v.find("]")
        name, rest = (v[:end + 1], v[end + 1:]) if end > 1 else ("", "")
    else:
        name, sep, port = v.partition(":")
        rest = sep + port
    if not name or any(c in name for c in "/?#@ \t,") or (":" in name and not name.startswith("[")):
        return None
    if name.startswith("["):
        try:
            ipaddress.IPv6Address(name[1:-1])
        except ValueError:
            return None
    if not rest:
        return name, None
    if rest[0] == ":" and rest[1:].isdigit() and 0 < int(rest[1:]) < 65536:
        return name, int(rest[1:])
    return None


def url_host(host: str) -> str:
    """A bind address as a URL spells it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def check_allow_host(value: str) -> str:
    """An --allow-host value: '*', NAME (any port) or NAME:PORT, in lower case."""
    if value.strip() == "*":
        return "*"
    parsed = _split_host(url_host(value.strip()) if value.count(":") > 1 else value)
    if parsed is None:
        raise BadInput(f"bad --allow-host {value!r}: expected a host name or address, optionally with :PORT "
                       "(e.g. graphmem.lan or 192.168.1.5:8765), or *")
    name, port = parsed
    return name if port is None else f"{name}:{port}"


def check_allow_origin(value: str) -> str:
    """An --allow-origin value: scheme://host[:port], in lower case (the form a browser's Origin header has)."""
    v = value.strip().lower().rstrip("/")
    scheme, sep, rest = v.partition("://")
    if scheme not in ("http", "https") or not sep or _split_host(rest) is None:
        raise BadInput(f"bad --allow-origin {value!r}: expected http:// or https:// and a host, optionally with "
                       ":PORT and nothing after it (e.g. http://localhost:3000)")
    return v


class Guard:
    """Refuse what a page on another site can make a browser send (403, graphmem.error.v1).

    DNS rebinding: a name the attacker controls is made to resolve to 127.0.0.1, so the browser
    treats the server as that site; its Host header still names the attacker's name. So the Host
    must be one of the server's own: the loopback names and the bound address, with the port, or
    a name given with ``allow_hosts`` (NAME for any port, NAME:PORT, or * for any).
    Cross-site requests: a browser names the page's site in Origin; it must be the server's own
    (http or https, and the Host) or one given with ``allow_origins``. (A POST must also carry a
    JSON Content-Type, which a browser does not send to another site without asking first: ``call``.)
    """

    def __init__(self, app: Any, *, host: str, port: int, allow_hosts: tuple[str, ...],
                 allow_origins: tuple[str, ...], error: Callable[[int, str, str], Any]) -> None:
        self.app = app
        self.error = error
        names = list(LOOPBACK_NAMES)
        if host not in WILDCARD and url_host(host).lower() not in names:
            names.append(url_host(host).lower())
        self.exact = {(n, port) for n in names}
        self.any_port: set[str] = set()
        self.any_host = False
        for h in allow_hosts:
            if h == "*":
                self.any_host = True
                continue
            parsed = _split_host(h)
            if parsed is None:
                raise BadInput(f"bad allowed host {h!r}")
            if parsed[1] is None:
                self.any_port.add(parsed[0])
            else:
                self.exact.add((parsed[0], parsed[1]))
        self.origins = {o.lower().rstrip("/") for o in allow_origins}
        self.expected = ", ".join([f"{n}:{port}" for n in names] + sorted(
            [f"{n}:{p}" for n, p in self.exact if n not in names] + list(self.any_port)))

    def refusal(self, headers: list[tuple[bytes, bytes]]) -> tuple[str, str] | None:
        """(code, message) when the request must be refused, else None."""
        hosts = [v.decode("latin-1") for k, v in headers if k == b"host"]
        origins = [v.decode("latin-1") for k, v in headers if k == b"origin"]
        if len(hosts) != 1:
            return "forbidden_host", (f"{'no' if not hosts else 'more than one'} Host header: expected one naming "
                                      f"this server ({self.expected})")
        host = hosts[0].strip().lower()
        parsed = _split_host(host)
        ok = parsed is not None and (self.any_host or parsed[0] in self.any_port
                                     or (parsed[0], parsed[1] or 80) in self.exact)
        if not ok:
            return "forbidden_host", (f"Host {show(hosts[0])} is not a name of this server: expected "
                                      f"{self.expected}, or a name allowed with --allow-host")
        if len(origins) > 1:
            return "forbidden_origin", "more than one Origin header: expected at most one"
        if origins:
            origin = origins[0].strip().lower().rstrip("/")
            if origin not in (f"http://{host}", f"https://{host}") and origin not in self.origins:
                return "forbidden_origin", (f"Origin {show(origins[0])} is not this server's: expected "
                                            f"http://{host} or an origin allowed with --allow-origin (a page on "
                                            "another site may not use this server)")
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refused = self.refusal(scope.get("headers") or [])
            if refused is not None:
                resp = self.error(403, *refused)
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


def check_bind(host: str, token: str | None, scoped: bool = False) -> None:
    if host not in LOOPBACK and not token and not scoped:
        raise BadInput(f"binding to {host!r} needs a token: expected --token or GRAPHMEM_TOKEN, or a loopback host")
