# Type stubs of the compiled module vehicledata._core (cpp/bindings/*.cpp).
# Submodules are typed as classes of static functions (a stub cannot declare a
# nested module): `_core.schema.records()` etc. type-check as written.
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

__version__: str

# ---- schema (schema_bindings.cpp) ---------------------------------------------------
class _Schema:
    DEFAULT_LIMIT: int
    MAX_LIMIT: int
    DEMO_FIRST_YEAR: int
    DEMO_LAST_YEAR: int
    @staticmethod
    def records() -> List[Dict[str, Any]]: ...
    @staticmethod
    def endpoints() -> List[Dict[str, Any]]: ...
    @staticmethod
    def attributes() -> List[str]: ...
    @staticmethod
    def legacy_trim_aliases() -> List[Tuple[str, str, bool]]: ...

schema: _Schema

# ---- query (query_bindings.cpp) -------------------------------------------------------
_ConditionsArg = Union[str, Sequence[Dict[str, Any]]]

class _Query:
    MAX_JSON_LENGTH: int
    MAX_CONDITIONS: int
    MAX_ARRAY_VALUES: int
    OPERATORS: Tuple[str, ...]
    @staticmethod
    def parse(text: str) -> List[Dict[str, Any]]: ...
    @staticmethod
    def encode(conditions: _ConditionsArg) -> str: ...
    @staticmethod
    def validate(conditions: _ConditionsArg, endpoint: str) -> None: ...
    @staticmethod
    def normalize(conditions: _ConditionsArg, endpoint: str) -> List[Dict[str, Any]]: ...
    @staticmethod
    def to_sql(conditions: _ConditionsArg, endpoint: str) -> Tuple[str, List[Any]]: ...

query: _Query

# ---- jwt (query_bindings.cpp) -----------------------------------------------------------
class _Jwt:
    @staticmethod
    def base64url_encode(data: bytes) -> str: ...
    @staticmethod
    def base64url_decode(text: str) -> Optional[bytes]: ...
    @staticmethod
    def hmac_sha256(key: bytes, data: bytes) -> bytes: ...
    @staticmethod
    def sign_hs256(payload_json: str, secret: str) -> str: ...
    @staticmethod
    def verify_hs256(token: str, secret: str, now: int) -> Tuple[str, Optional[str]]: ...
    @staticmethod
    def payload_unverified(token: str) -> Optional[str]: ...
    @staticmethod
    def expiry_unverified(token: str) -> Optional[int]: ...

jwt: _Jwt

# ---- envelope (envelope_bindings.cpp) ----------------------------------------------------
class _Envelope:
    """The service's exception names (one constant each) and its error body."""

    BAD_REQUEST: str
    UNAUTHORIZED: str
    UNAUTHENTICATED: str
    FORBIDDEN: str
    DEPRECATED: str
    NOT_FOUND: str
    RECORD_NOT_FOUND: str
    METHOD_NOT_ALLOWED: str
    REQUEST_TIMEOUT: str
    PAYLOAD_TOO_LARGE: str
    URI_TOO_LONG: str
    RANGE_NOT_SATISFIABLE: str
    REQUEST_HEADER_FIELDS_TOO_LARGE: str
    TOO_MANY_REQUESTS: str
    INTERNAL_ERROR: str
    NOT_IMPLEMENTED: str
    BAD_GATEWAY: str
    SERVICE_UNAVAILABLE: str
    GATEWAY_TIMEOUT: str
    HTTP: str
    EXCEPTIONS: Tuple[str, ...]
    COLLECTION_MEMBERS: Tuple[str, ...]
    @staticmethod
    def exception_for(status: int) -> str: ...
    @staticmethod
    def error_json(exception: str, code: int, url: str, message: str) -> str: ...
    @staticmethod
    def read_error(body: bytes, content_type: str) -> Dict[str, Any]: ...

envelope: _Envelope

# ---- client (client_bindings.cpp) ---------------------------------------------------------
class _Page:
    """One decoded page: typed columns of one record type."""

    @property
    def rows(self) -> int: ...
    @property
    def url(self) -> str: ...
    @property
    def record(self) -> str: ...
    @property
    def body_bytes(self) -> int: ...
    @property
    def collection(self) -> Dict[str, Any]: ...
    @property
    def column_names(self) -> List[str]: ...
    def columns(self) -> List[Dict[str, Any]]: ...
    def to_lists(self) -> Dict[str, List[Any]]: ...
    def nbytes(self) -> int: ...
    def copy(self) -> "_Page": ...
    # The Arrow PyCapsule interface (arrow_bindings.cpp): capsules of the Arrow C Data Interface.
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_array__(self, requested_schema: Any = ...) -> Tuple[Any, Any]: ...
    def __arrow_c_stream__(self, requested_schema: Any = ...) -> Any: ...

class _RecordBase:
    """A record: a view over one row of a decoded page, or a dict of fields (record_bindings.cpp)."""

    def __init__(self, data: Dict[str, Any] = ..., record: str = ...) -> None: ...
    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, key: str) -> Any: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object) -> bool: ...
    @property
    def _data(self) -> Dict[str, Any]: ...
    @property
    def _kind(self) -> str: ...
    @property
    def _is_view(self) -> bool: ...

class _CoreClient:
    def __init__(
        self,
        *,
        base_url: str = ...,
        api_token: str = ...,
        api_secret: str = ...,
        connect_timeout: float = ...,
        timeout: float = ...,
        user_agent: str = ...,
        verify_tls: bool = ...,
        ca_bundle: str = ...,
        proxy: str = ...,
        http2: bool = ...,
        retry_total: int = ...,
        backoff_factor: float = ...,
        backoff_max: float = ...,
        backoff_jitter: float = ...,
        status_forcelist: Sequence[int] = ...,
        respect_retry_after: bool = ...,
        max_wait: float = ...,
        retry_transport_errors: bool = ...,
        rate_limit: float = ...,
        login_rate_limit: float = ...,
        rate_limit_burst: float = ...,
        jwt_cache_path: str = ...,
        jwt_margin: int = ...,
        max_parallel: int = ...,
        max_pages: int = ...,
        max_body: int = ...,
        max_decompressed: int = ...,
        low_speed_limit: int = ...,
        low_speed_time: float = ...,
        logger: Optional[Callable[[int, str], Any]] = ...,
    ) -> None: ...
    @property
    def base_url(self) -> str: ...
    @property
    def has_credentials(self) -> bool: ...
    @property
    def has_token(self) -> bool: ...
    @property
    def token_expires_at(self) -> Optional[int]: ...
    def login(self) -> None: ...
    def get(self, target: str) -> Dict[str, Any]: ...
    def get_page(self, target: str, record: str, shape: str = ..., verbose: bool = ...) -> _Page: ...
    def get_pages(self, targets: Sequence[str], record: str, shape: str = ..., verbose: bool = ...) -> List[_Page]: ...
    def collect_pages(self, first: _Page, targets: Sequence[str], record: str, shape: str = ...,
                      verbose: bool = ...) -> Tuple[_Page, List[Dict[str, Any]]]: ...
    def download(self, target: str, path: str, resume: bool = ...,
                 progress: Optional[Callable[[int, int], Any]] = ...) -> Dict[str, Any]: ...
    def stats(self) -> Dict[str, Any]: ...
    def url_for(self, target: str) -> str: ...

class _Client:
    DEFAULT_BASE_URL: str
    USER_AGENT: str
    Page = _Page
    Client = _CoreClient
    RecordBase = _RecordBase
    @staticmethod
    def records(page: _Page, cls: type, convert: Callable[[str, str, str], Any]) -> List[Any]: ...
    @staticmethod
    def arrow_stream(schema_page: _Page, pages: Iterable[_Page]) -> Any: ...
    @staticmethod
    def decode(body: bytes, record: str, shape: str = ..., url: str = ..., verbose: bool = ...) -> _Page: ...
    @staticmethod
    def concat(pages: Sequence[_Page]) -> _Page: ...
    @staticmethod
    def parse_timestamp(text: str) -> Optional[Tuple[int, int]]: ...
    @staticmethod
    def parse_retry_after(value: str, now: int) -> Optional[float]: ...

client: _Client

# ---- vin (vin_bindings.cpp) ----------------------------------------------------------
def vin_normalize(vin: str) -> str: ...
def vin_validation_error(vin: str) -> str: ...
def vin_check_digit(vin: str) -> str: ...
