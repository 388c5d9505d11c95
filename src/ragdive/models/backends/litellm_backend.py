"""`litellm/<model>`: every other provider through LiteLLM (optional extra: pip install 'ragdive[litellm]').

LiteLLM's own retries are off (num_retries=0): the wrapper owns retries. Its exceptions carry an HTTP-like
``status_code`` that becomes ModelError's status and retryability.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ...errors import ConfigError, ModelError
from ..base import Completion, GenerateParams, Message, ModelBackend
from ..retry import status_is_retryable
from ..structured import schema_json
from .openai_shape import completion_from_choice

INSTALL_HINT = "the litellm backend is an optional extra: pip install 'ragdive[litellm]'"


def _import_litellm() -> Any:
    try:
        import litellm
    except ImportError as exc:
        raise ConfigError(INSTALL_HINT) from exc
    return litellm


class LiteLLMBackend(ModelBackend):
    provider = "litellm"

    def __init__(self, name: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> None:
        super().__init__(name, **options)
        self._litellm = _import_litellm()
        self.model_id = name.split("/", 1)[1]
        self.base_url = base_url
        self.api_key = api_key

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
    ) -> Completion:
        request: dict[str, Any] = params.model_dump(exclude_none=True) if params else {}
        if schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema_json(schema)},
            }
        try:
            response = await self._litellm.acompletion(
                model=self.model_id,
                messages=[{"role": m.role, "content": m.content} for m in messages],
                api_base=self.base_url,
                api_key=self.api_key,
                num_retries=0,
                **request,
            )
        except Exception as exc:  # litellm maps every provider's errors onto its own classes
            status = getattr(exc, "status_code", None)
            retryable = status_is_retryable(status) or isinstance(exc, TimeoutError | ConnectionError)
            raise ModelError(
                f"{self.name}: {exc}", provider=self.provider, model=self.name, status=status, retryable=retryable
            ) from exc
        return completion_from_choice(response, response.choices[0], self.name)
