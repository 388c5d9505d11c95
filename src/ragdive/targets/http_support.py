"""What the HTTP-speaking adapters share: JSON templates, retried calls, and reading contexts from responses."""

from __future__ import annotations

import asyncio
import json
import re
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import jmespath
from jmespath.exceptions import JMESPathError
from jmespath.visitor import TreeInterpreter

from .. import http_client
from ..errors import ConfigError, TargetError
from ..http_client import JsonSession
from ..records import Citation, Context
from ..redaction import redact_urls
from ..retrying import RetryPolicy, parse_retry_after, status_is_retryable

if TYPE_CHECKING:
    import httpx  # a caller's own client; a run's calls go through JsonSession (http_client.py says why lazily)

PLACEHOLDER = re.compile(r"\{(message|history|conversation_id|session_id)\}")
BODY_EXCERPT = 2000  # characters of a failing response kept on the TargetError


def render_template(template: Any, values: dict[str, Any]) -> Any:
    """Fill placeholders structurally, never by formatting JSON text: a string that is exactly one placeholder
    becomes the value itself (``"{history}"`` -> a list of messages); inside longer text the value is inserted as
    text (JSON for non-strings). Any other brace text is left as it is."""
    if isinstance(template, dict):
        return {key: render_template(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [render_template(value, values) for value in template]
    if not isinstance(template, str):
        return template
    whole = PLACEHOLDER.fullmatch(template)
    if whole:
        return values.get(whole.group(1))

    def as_text(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return value if isinstance(value, str) else json.dumps(value)

    return PLACEHOLDER.sub(as_text, template)


def compile_path(expression: str | None, what: str) -> Any:
    """Compile a JMESPath once, so a typo is a ConfigError at build time rather than a failure on every turn."""
    if expression is None:
        return None
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise ConfigError(f"{what}: invalid JMESPath {expression!r}: {exc}") from exc


class TargetClient:
    """The HTTP targets' client when the caller gives none: ragdive.http_client's JSON session (aiohttp's pool,
    behaving as httpx's client does where a server could tell: no redirect followed, cookies kept, the same error
    types), one per event loop. The httpx client on aiohttp's transport took ~3x the CPU of a model call per
    target request (httpx's request and response models, auth and redirect flows, cookie extraction, then the
    transport's translation): ~8 % of a 200 x 5 run's CPU for 1,000 of its 7,400 requests (issue 27)."""

    def __init__(self, timeout_s: float, connections: int = 100) -> None:
        self._timeout_s = timeout_s
        self._connections = connections
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, JsonSession] = weakref.WeakKeyDictionary()

    def session(self) -> JsonSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None:
            session = self._sessions[loop] = JsonSession(
                connections=self._connections,
                connect_timeout_s=self._timeout_s,
                read_timeout_s=self._timeout_s,
                as_httpx=True,
            )
        return session

    async def aclose(self) -> None:
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.aclose()


class _Reply:
    """What request_json reads of a response, from either client; the text is decoded only when it is shown."""

    def __init__(self, status: int, headers: Any, content: bytes, response: httpx.Response | None = None) -> None:
        self.status, self.headers, self.content, self._response = status, headers, content, response

    @property
    def text(self) -> str:
        """The body as httpx decodes it (the Content-Type's charset, else UTF-8)."""
        import httpx  # shown for a failure only

        response = self._response or httpx.Response(
            self.status, headers=list(self.headers.items()), content=self.content
        )
        return response.text


async def request_json(
    client: httpx.AsyncClient | TargetClient,
    method: str,
    url: str,
    *,
    body: Any = None,
    headers: dict[str, str] | None = None,
    max_retries: int = 2,
    backoff_s: float = 0.5,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Any:
    """Send one request and return the parsed JSON body. Connection errors, timeouts, a reply cut off, 408/409/429,
    5xx and a body that is not JSON are retried under the shared policy (ragdive.retrying: Retry-After honoured,
    jittered exponential backoff), as the model layer retries them; whatever still fails is a TargetError carrying
    the status and the body. ``sleep`` is replaceable so tests can see the waits without waiting."""
    params: dict[str, str] | None = None
    if body is not None and method == "GET" and isinstance(body, dict):
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}
        body = None
    policy = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s)
    attempt = 0
    while True:
        try:
            response = await _send(client, method, url, body, params, headers)
        except http_client.TransportError as exc:  # connect/read errors, timeouts, a peer gone mid-reply
            if attempt < max_retries:
                await sleep(policy.delay(attempt))
                attempt += 1
                continue
            raise TargetError(
                f"{method} {url} failed after {attempt + 1} attempt(s): {type(exc).__name__}: {exc}"
            ) from exc
        if response.status >= 400:
            if status_is_retryable(response.status) and attempt < max_retries:
                await sleep(policy.delay(attempt, parse_retry_after(response.headers)))
                attempt += 1
                continue
            text = response.text
            raise TargetError(
                f"{method} {url} answered HTTP {response.status}: {text[:300]}"
                + (f" (after {attempt + 1} attempts)" if attempt else ""),
                status=response.status,
                body=text[:BODY_EXCERPT],
            )
        try:
            return json.loads(response.content)  # as httpx's Response.json (the standard library: exact integers)
        except ValueError as exc:
            if attempt < max_retries:  # a broken proxy's page: the next attempt may reach the system
                await sleep(policy.delay(attempt))
                attempt += 1
                continue
            text = response.text
            raise TargetError(
                f"{method} {url} answered a body that is not JSON: {text[:300]!r}",
                status=response.status,
                body=text[:BODY_EXCERPT],
            ) from exc


async def _send(
    client: httpx.AsyncClient | TargetClient,
    method: str,
    url: str,
    body: Any,
    params: dict[str, str] | None,
    headers: dict[str, str] | None,
) -> _Reply:
    if isinstance(client, TargetClient):
        reply = await client.session().request(method, url, body=body, params=params, headers=headers)
        return _Reply(reply.status, reply.headers, reply.body)
    kwargs: dict[str, Any] = {"headers": headers}
    if params is not None:
        kwargs["params"] = params
    elif body is not None:
        kwargs["json"] = body
    response = await client.request(method, url, **kwargs)
    return _Reply(response.status_code, response.headers, response.content, response)


async def check_reachable(url: str, timeout_s: float = 5.0) -> None:
    """Open (and close) a TCP connection to the URL's host and port: a target that is down, or a wrong port, fails
    here in seconds instead of after the first drafts (measured before this: 47 s of simulation, then the error).
    Nothing is sent, so the target sees no request it would have to answer or count."""
    scheme, host, port = host_and_port(url)
    if _through_a_proxy(scheme, host):
        return  # httpx will go through the proxy (HTTP_PROXY...): a direct connection says nothing about that
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except (OSError, TimeoutError) as exc:
        why = f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise TargetError(
            f"target {redact_urls(url)} is unreachable: cannot connect to {host}:{port} ({why})"
        ) from None
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass


def host_and_port(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) as httpx.URL reads them (lower case, an IPv6 address without brackets; the scheme's
    port when none is given), by the standard library's parser: httpx is not imported by a run (http_client.py).
    A port that is not a number is the config's error, said in one line."""
    parsed = urlsplit(url)
    try:
        port = parsed.port
    except ValueError as exc:  # "Port could not be cast to integer value", "Port out of range 0-65535"
        raise ConfigError(f"target url {redact_urls(url)}: {exc}") from None
    return parsed.scheme, parsed.hostname or "", port or (443 if parsed.scheme == "https" else 80)


def _through_a_proxy(scheme: str, host: str) -> bool:
    from urllib.request import getproxies, proxy_bypass

    proxies = getproxies()
    return bool(proxies.get(scheme) or proxies.get("all")) and not proxy_bypass(host)


_INTERPRETER = TreeInterpreter()
"""One for every search: a compiled path's own ``search`` makes an interpreter per call, and each one is a reference
cycle (its cache of bound methods) only the collector frees: two a turn, ~16,000 objects at 200 x 5."""


def search(path: Any, data: Any, what: str, raw: Any) -> Any:
    try:
        return _INTERPRETER.visit(path.parsed, data)  # what path.search(data) does, on the shared interpreter
    except JMESPathError as exc:  # e.g. a type error inside the expression for this response
        raise TargetError(f"{what}: {exc}", body=json.dumps(raw)[:BODY_EXCERPT]) from exc


def read_answer(path: Any, data: Any, expression: str) -> str:
    value = search(path, data, f"answer path {expression!r}", data)
    if not isinstance(value, str):
        found = "nothing" if value is None else type(value).__name__
        raise TargetError(
            f"answer path {expression!r} found {found} in the response, expected a string",
            body=json.dumps(data)[:BODY_EXCERPT],
        )
    return value


def read_contexts(value: Any) -> list[Context]:
    """Contexts as systems return them: strings, or objects with text (or content / page_content), id, source,
    score. Missing means none; anything else is a TargetError (a silently empty list would hide a broken path)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TargetError(f"contexts must be a list, got {type(value).__name__}")
    contexts = []
    for item in value:
        if isinstance(item, str):
            contexts.append(Context(text=item))
            continue
        if not isinstance(item, dict):
            raise TargetError(f"a context must be a string or an object, got {type(item).__name__}")
        text = item.get("text", item.get("content", item.get("page_content")))
        if not isinstance(text, str):
            raise TargetError(f"a context has no text (keys: {', '.join(sorted(item))})")
        found = item.get("metadata")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        ident = item.get("id", meta.get("id"))
        source = item.get("source", meta.get("source"))
        score = item.get("score")
        contexts.append(
            Context(
                text=text,
                id=None if ident is None else str(ident),
                source=None if source is None else str(source),
                score=float(score) if isinstance(score, int | float) else None,
            )
        )
    return contexts


def read_citations(value: Any, contexts: list[Context]) -> list[Citation] | None:
    """A reply's citations field: a list of 1-based context ranks, or objects naming the cited passage by
    ``context``/``rank`` (1-based) or by its ``id`` among the returned contexts, with the ``sentence`` (or
    ``text``/``quote``) they are for. None (the field is absent) means the target gave no citations field."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise TargetError(f"citations must be a list, got {type(value).__name__}")
    ranks = {c.id: i for i, c in enumerate(contexts, 1) if c.id is not None}
    citations = []
    for item in value:
        if isinstance(item, int) and not isinstance(item, bool):
            citations.append(Citation(context=item))
            continue
        if not isinstance(item, dict):
            raise TargetError(f"a citation must be a context rank or an object, got {type(item).__name__}")
        rank = item.get("context", item.get("rank"))
        if rank is None and item.get("id") is not None:
            rank = ranks.get(str(item["id"]))
            if rank is None:
                raise TargetError(f"a citation names context id {item['id']!r}, which the reply did not return")
        if not isinstance(rank, int) or isinstance(rank, bool):
            raise TargetError(f"a citation has no context rank or known id (keys: {', '.join(sorted(item))})")
        sentence = item.get("sentence", item.get("text", item.get("quote")))
        citations.append(Citation(context=rank, sentence=sentence if isinstance(sentence, str) else None))
    return citations
