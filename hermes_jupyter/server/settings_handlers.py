"""`settings`, `settings/test`, `settings/local`: the model settings panel's routes (docs/api.md, docs/models.md).

Reading is open to every caller of the hermes routes (nothing secret is in the answer); saving and
testing are a person's: a test may send the saved key, and a kernel must not point it elsewhere.
"""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from .handlers import HermesHandler, api_errors
from .errors import user_error
from .model_settings import ModelSettings
from .principals import person_only

SETTING = "hermes_model_settings"


class _SettingsHandler(HermesHandler):
    auth_resource = "hermes:settings"

    @property
    def model_settings(self) -> ModelSettings:
        found = self.settings.get(SETTING)
        if found is None:  # the state dir was refused at start (state_check.py): nothing to save into
            raise user_error(503, "Model settings are not available: this server could not use its state folder.")
        return found  # type: ignore[no-any-return]


class SettingsHandler(_SettingsHandler):
    """`GET settings`: `{backend, url, model, key_set, key_hint, key_saved, locked, backends}`, never the key;
    `PUT settings` `{backend?, url?, model?, key?}` (null or "" clears one) answers the same."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        self.answer(self.model_settings.view())

    @web.authenticated
    @authorized
    @api_errors
    @person_only("settings")
    async def put(self) -> None:
        body = self.json_body()
        self.answer(await asyncio.to_thread(self.model_settings.update, body))


class SettingsTestHandler(_SettingsHandler):
    """`POST settings/test` `{url?, key?, model?}`: `{ok, kind, message, models, detail}` in plain words."""

    @web.authenticated
    @authorized
    @api_errors
    @person_only("settings")
    async def post(self) -> None:
        result = await self.model_settings.test(self.json_body())
        self.answer(result.to_json())


class LocalServersHandler(_SettingsHandler):
    """`GET settings/local`: `{servers: [{name, url, models}]}`, the model servers answering on 127.0.0.1."""

    @web.authenticated
    @authorized
    @api_errors
    async def get(self) -> None:
        self.answer({"servers": await self.model_settings.local()})


handlers = [
    (r"settings", SettingsHandler),
    (r"settings/test", SettingsTestHandler),
    (r"settings/local", LocalServersHandler),
]
