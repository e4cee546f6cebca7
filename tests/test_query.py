"""Conditions of the `json` parameter: Python sugar over the C++ core (no emulator needed)."""
import doctest
import json
import pickle

import pytest

import vehicledata
from vehicledata import F, Condition, QueryError, _core, errors, query, schema

TRIMS = "/api/trims/v2"


# ---- sugar -------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "cond, expected",
    [
        (F("year") == 2019, Condition("year", "=", 2019)),
        (F("year") != 2016, Condition("year", "!=", 2016)),
        (F("year") > 2015, Condition("year", ">", 2015)),
        (F("year") < 2021, Condition("year", "<", 2021)),
        (F("msrp") >= 10000.5, Condition("msrp", ">=", 10000.5)),
        (F("msrp") <= 90000, Condition("msrp", "<=", 90000)),
        (F("make").isin(["BMW", "Audi"]), Condition("make", "in", ("BMW", "Audi"))),
        (F("make").notin(("Kia",)), Condition("make", "not in", ("Kia",))),
        (F("trim").like("%Sport%"), Condition("trim", "like", "%Sport%")),
        (F("trim").not_like("Base%"), Condition("trim", "not like", "Base%")),
        (F("series").not_null(), Condition("series", "not null")),
        (F("invoice").is_null(), Condition("invoice", "is null")),
        (F("series") == None, Condition("series", "is null")),  # noqa: E711
        (F("series") != None, Condition("series", "not null")),  # noqa: E711
        (2018 <= F("year"), Condition("year", ">=", 2018)),  # reflected comparison
    ],
)
def test_every_operator_builds_its_condition(cond, expected):
    assert cond == expected


def test_twelve_operators_exported():
    assert query.OPERATORS == ("=", "!=", ">", "<", ">=", "<=", "in", "not in", "like", "not like", "not null", "is null")
    assert (query.MAX_JSON_LENGTH, query.MAX_CONDITIONS, query.MAX_ARRAY_VALUES) == (8192, 32, 500)


def test_encode_every_operator_exact_text():
    conds = [
        F("year") == 2019, F("year") != 2016, F("year") > 2015, F("year") < 2021, F("msrp") >= 10000.5,
        F("msrp") <= 90000, F("make").isin(["BMW", "Audi"]), F("make").notin(["Kia"]), F("trim").like("%Sport%"),
        F("trim").not_like("Base%"), F("series").not_null(), F("invoice").is_null(),
    ]
    assert query.encode(conds) == (
        '[{"field":"year","op":"=","val":2019},{"field":"year","op":"!=","val":2016},'
        '{"field":"year","op":">","val":2015},{"field":"year","op":"<","val":2021},'
        '{"field":"msrp","op":">=","val":10000.5},{"field":"msrp","op":"<=","val":90000},'
        '{"field":"make","op":"in","val":["BMW","Audi"]},{"field":"make","op":"not in","val":["Kia"]},'
        '{"field":"trim","op":"like","val":"%Sport%"},{"field":"trim","op":"not like","val":"Base%"},'
        '{"field":"series","op":"not null"},{"field":"invoice","op":"is null"}]'
    )


def test_and_combines_and_truthiness_is_refused():
    both = (F("year") >= 2018) & (F("year") <= 2020)
    assert both == [Condition("year", ">=", 2018), Condition("year", "<=", 2020)]
    three = both & F("make").isin(["BMW"])
    assert [c.op for c in three] == [">=", "<=", "in"]
    with pytest.raises(TypeError, match="no truth value"):
        F("year") == 2019 and F("make") == "BMW"  # noqa: B015
    with pytest.raises(TypeError, match="no truth value"):
        bool(F("year"))
    with pytest.raises(TypeError):
        hash(F("year"))


def test_condition_is_frozen_and_to_dict_gives_wire_shape():
    c = F("make").isin(["BMW", "Audi"])
    assert c.to_dict() == {"field": "make", "op": "in", "val": ["BMW", "Audi"]}
    assert F("series").is_null().to_dict() == {"field": "series", "op": "is null", "val": None}
    with pytest.raises(AttributeError):
        c.field = "model"  # type: ignore[misc]
    assert {c, F("make").isin(("BMW", "Audi"))} == {c}  # hashable, equal by value


def test_list_values_only_through_isin():
    with pytest.raises(QueryError) as e:
        F("make") == ["BMW"]  # noqa: B015
    assert str(e.value) == 'condition (field "make", op "="): val must be a single value, got list (use .isin() for a list)'
    assert (e.value.field, e.value.op, e.value.position) == ("make", "=", None)
    with pytest.raises(QueryError, match="val must be a list of values, got str"):
        F("make").isin("BMW")
    with pytest.raises(QueryError):
        F("")


# ---- inputs: dicts, JSON text, mixed ---------------------------------------------------------

def test_dicts_text_and_conditions_are_interchangeable():
    text = '[{"field":"year","op":">=","val":2018},{"field":"make","op":"in","val":["BMW"]}]'
    as_dicts = [{"field": "year", "op": ">=", "val": 2018}, {"field": "make", "op": "in", "val": ("BMW",)}]
    as_sugar = [F("year") >= 2018, F("make").isin(["BMW"])]
    mixed = [F("year") >= 2018, {"field": "make", "op": "IN", "val": ["BMW"]}]
    for form in (text, as_dicts, as_sugar, mixed, tuple(as_sugar)):
        assert query.encode(form) == text
        assert query.normalize(form) == [
            {"field": "year", "op": ">=", "val": 2018}, {"field": "make", "op": "in", "val": ["BMW"]},
        ]
    assert query.encode(F("year") >= 2018) == '[{"field":"year","op":">=","val":2018}]'
    assert query.encode({"field": "series", "op": "is null"}) == '[{"field":"series","op":"is null"}]'
    assert query.encode(None) == "[]"
    assert query.encode([]) == "[]"


def test_parse_returns_conditions_and_round_trips():
    text = (
        '[{"field":"make","op":"=","val":"Citro\u00ebn \\"C\\" \\\\ \u65e5"},{"field":"a","op":"in","val":[true,null,1.5,-7]},'
        '{"field":"size","op":">","val":2.0},{"field":"b","op":"not null"}]'
    )
    conds = query.parse(text)
    assert conds == [
        Condition("make", "=", 'Citro\u00ebn "C" \\ \u65e5'),
        Condition("a", "in", (True, None, 1.5, -7)),
        Condition("size", ">", 2.0),
        Condition("b", "not null"),
    ]
    assert type(conds[2].val) is float
    assert query.encode(conds) == text
    assert query.encode(query.parse(query.encode(conds))) == text


def test_values_keep_their_python_types():
    assert query.encode(F("a").isin([True, False, None, 0, -1, 0.5, 2.0, "", "x"])) == (
        '[{"field":"a","op":"in","val":[true,false,null,0,-1,0.5,2.0,"","x"]}]'
    )
    assert query.encode(F("a") == 2**63 - 1) == '[{"field":"a","op":"=","val":9223372036854775807}]'
    assert query.encode(F("a") == "\n\t\x01/") == '[{"field":"a","op":"=","val":"\\n\\t\\u0001/"}]'


def test_numpy_scalars_are_accepted():
    np = pytest.importorskip("numpy")
    assert query.encode(F("year").isin([np.int64(2019), np.float64(1.5)])) == (
        '[{"field":"year","op":"in","val":[2019,1.5]}]'
    )


# ---- endpoint validation ------------------------------------------------------------------------

def test_encode_with_endpoint_converts_numeric_strings():
    assert query.encode(F("year") >= "2018", endpoint=TRIMS) == '[{"field":"year","op":">=","val":2018}]'
    assert query.encode(F("model") == 911, endpoint=TRIMS) == '[{"field":"model","op":"=","val":"911"}]'
    assert query.encode(F("year") >= "2018", endpoint=schema.endpoint(TRIMS)) == '[{"field":"year","op":">=","val":2018}]'
    # Without an endpoint the values are sent as given.
    assert query.encode(F("year") >= "2018") == '[{"field":"year","op":">=","val":"2018"}]'


@pytest.mark.parametrize(
    "conds, message, field, op",
    [
        (F("foo") == 1, 'condition 1 (field "foo", op "="): unknown json field "foo" for /api/trims/v2', "foo", "="),
        ([F("make").not_null(), F("year") >= "soon"],
         'condition 2 (field "year", op ">="): val must be a number for integer field year', "year", ">="),
        (F("year").isin([2019, "x"]),
         'condition 1 (field "year", op "in"): val[1] must be a number for integer field year', "year", "in"),
        (F("make") == 1.5, 'condition 1 (field "make", op "="): val must be a string for string field make', "make", "="),
        (F("trim").like(5), 'condition 1 (field "trim", op "like"): val must be a string (a LIKE pattern)', "trim", "like"),
        (F("created") >= 2023,
         'condition 1 (field "created", op ">="): val must be a string for timestamp field created', "created", ">="),
        ({"field": "series", "op": "=", "val": None},
         'condition 1 (field "series", op "="): val must not be null; use op "is null" or "not null"', "series", "="),
        (F("year").isin([]), 'condition 1 (field "year", op "in"): val must not be an empty array', "year", "in"),
        (F("year") == float("nan"), 'condition 1 (field "year", op "="): val must be a finite number', "year", "="),
        (F("year") == 2**64, 'condition 1 (field "year", op "="): val is out of the 64-bit integer range', "year", "="),
        (F("year") == object(), 'condition 1 (field "year", op "="): val must be a scalar or an array of scalars, got object',
         "year", "="),
        ({"field": "year", "op": "=="},
         'condition 1 (field "year", op "=="): unknown op; expected one of =, !=, >, <, >=, <=, in, not in, like, '
         "not like, not null, is null", "year", "=="),
        ({"field": "year", "op": "="}, 'condition 1 (field "year", op "="): missing "val"', "year", "="),
        ({"field": "year", "op": "is null", "val": 1},
         'condition 1 (field "year", op "is null"): val must be absent or null, got a number', "year", "is null"),
        ({"field": "year", "op": "=", "val": 1, "value": 2},
         'condition 1 (field "year", op "="): unknown member "value"; expected field, op, val', "year", "="),
        ({"op": "="}, 'condition 1 (op "="): missing "field"', None, "="),
        ([F("a") == 1, 5], 'condition 2 must be an object {"field", "op", "val"}, got a number', None, None),
    ],
)
def test_errors_name_field_op_and_reason(conds, message, field, op):
    with pytest.raises(QueryError) as e:
        query.encode(conds, endpoint=TRIMS)
    assert str(e.value) == message
    assert (e.value.field, e.value.op, e.value.position) == (field, op, None)
    assert isinstance(e.value, ValueError)
    assert isinstance(e.value, vehicledata.VehicleDataError)


def test_json_text_in_a_list_joins_its_conditions_in_one_call():
    # What a search sends for api.trims.search(F("year") >= "2018", where='...'): one core call.
    text = '[{"field":"make","op":"IN","val":["BMW"]},{"field":"series","op":"is null"}]'
    assert query.encode([F("year") >= "2018", text], endpoint=TRIMS) == (
        '[{"field":"year","op":">=","val":2018},{"field":"make","op":"in","val":["BMW"]},'
        '{"field":"series","op":"is null"}]'
    )
    assert query.encode(["[]"], endpoint=TRIMS) == "[]"
    # Conditions are counted across the list and the text, as they are sent.
    with pytest.raises(QueryError) as e:
        query.encode([F("year") >= 2018, '[{"field":"make","op":"=","val":"BMW"},{"field":"foo","op":"=","val":1}]'],
                     endpoint=TRIMS)
    assert str(e.value) == 'condition 3 (field "foo", op "="): unknown json field "foo" for /api/trims/v2'
    # A parse error keeps its position in the text.
    with pytest.raises(QueryError) as e:
        query.encode([F("year") >= 2018, '[{"field":"year","op":">=","val":01}]'], endpoint=TRIMS)
    assert (str(e.value), e.value.position) == ("json is not valid JSON: invalid number (at byte 33)", 33)
    with pytest.raises(QueryError, match="^json has more than 32 conditions$"):
        query.encode([F("year").not_null()] * 30 + ['[{"field":"a","op":"not null"},{"field":"a","op":"not null"},'
                                                     '{"field":"a","op":"not null"}]'])


def test_dict_values_convert_like_the_parser_reads_json():
    # Sets are arrays; a value of no JSON kind is named by its type, inside an array too.
    assert query.encode({"field": "make", "op": "in", "val": {"BMW"}}) == '[{"field":"make","op":"in","val":["BMW"]}]'
    only_python = [
        ({"field": "make", "op": "in", "val": ["BMW", b"x"]},
         'condition 1 (field "make", op "in"): val[1] must be a scalar (string, number, true, false or null), got bytes'),
        ({"field": "year", "op": "in", "val": [1, 2**70]},
         'condition 1 (field "year", op "in"): val[1] is out of the 64-bit integer range'),
    ]
    # These read the same as dicts and as JSON text (the text's messages add "(at byte N)").
    both = [
        ({"field": "make", "op": "in", "val": [1, [2]]},
         'condition 1 (field "make", op "in"): val[1] must be a scalar (string, number, true, false or null), '
         "got an array"),
        ({"field": "make", "op": "=", "val": {"a": 1}},
         'condition 1 (field "make", op "="): val must be a scalar or an array of scalars, got an object'),
        ({"field": 5, "op": "="}, 'condition 1: "field" must be a string, got a number'),
        ({"field": "a", "op": None}, 'condition 1 (field "a"): "op" must be a string, got null'),
        ({"field": "a", "op": "in", "val": "BMW"},
         'condition 1 (field "a", op "in"): val must be an array of values, got a string'),
        ({"field": "a", "op": "=", "val": [1]},
         'condition 1 (field "a", op "="): val must be a single value, got an array (use op "in" for a list)'),
        ({"field": "a", "op": "in", "val": list(range(501))},
         'condition 1 (field "a", op "in"): val has more than 500 values'),
        ({"field": "a", "op": "not null", "val": "x"},
         'condition 1 (field "a", op "not null"): val must be absent or null, got a string'),
    ]
    for cond, message in only_python + both:
        with pytest.raises(QueryError) as e:
            query.encode([cond])
        assert str(e.value) == message
        assert e.value.position is None
    for cond, message in both:
        with pytest.raises(QueryError) as e:
            query.parse(json.dumps([cond]))
        assert str(e.value).rsplit(" (at byte ", 1)[0] == message
        assert e.value.position is not None


# ---- datetimes: the core's US Eastern rules ------------------------------------------------------

def _zoneinfo_text(moment):
    from zoneinfo import ZoneInfo

    return moment.astimezone(ZoneInfo("America/New_York")).replace(microsecond=0).isoformat()


def test_datetimes_convert_with_the_core_rules_at_every_dst_boundary():
    from datetime import datetime, timedelta, timezone

    checked = 0
    for year in range(1990, 2040):
        for month in (3, 4, 10, 11):
            first = datetime(year, month, 1, tzinfo=timezone.utc)
            for hours in range(0, 31 * 24, 1):
                moment = first + timedelta(hours=hours, seconds=-1 if hours % 2 else 0)
                if moment.weekday() != 6 and (moment - timedelta(hours=12)).weekday() != 6:
                    continue  # only the Sundays (and the night after), where a transition can fall
                assert query.service_time(moment) == _zoneinfo_text(moment), moment
                checked += 1
    assert checked > 10000
    # The exact seconds around the 2023 and 2024 transitions.
    for utc, text in [
        (datetime(2023, 3, 12, 6, 59, 59), "2023-03-12T01:59:59-05:00"),
        (datetime(2023, 3, 12, 7, 0, 0), "2023-03-12T03:00:00-04:00"),
        (datetime(2023, 11, 5, 5, 59, 59), "2023-11-05T01:59:59-04:00"),
        (datetime(2023, 11, 5, 6, 0, 0), "2023-11-05T01:00:00-05:00"),
        (datetime(2024, 3, 10, 7, 0, 0), "2024-03-10T03:00:00-04:00"),
        (datetime(2024, 11, 3, 6, 0, 0), "2024-11-03T01:00:00-05:00"),
        (datetime(2006, 4, 2, 7, 0, 0), "2006-04-02T03:00:00-04:00"),  # the rules before 2007
        (datetime(2006, 10, 29, 6, 0, 0), "2006-10-29T01:00:00-05:00"),
    ]:
        assert query.service_time(utc) == text  # naive is UTC
        assert query.service_time(utc.replace(tzinfo=timezone.utc, microsecond=999999)) == text
        assert query.encode(F("modified") >= utc, endpoint=TRIMS) == f'[{{"field":"modified","op":">=","val":"{text}"}}]'


def test_datetime_kinds_in_conditions():
    from datetime import date, datetime, timedelta, timezone

    pd = pytest.importorskip("pandas")
    plus2 = timezone(timedelta(hours=2))
    assert query.service_time(datetime(2023, 6, 30, 3, 1, 6, tzinfo=plus2)) == "2023-06-29T21:01:06-04:00"
    assert query.service_time(pd.Timestamp("2020-01-15 12:00:00.123456789", tz="UTC")) == "2020-01-15T07:00:00-05:00"
    assert query.service_time(pd.Timestamp("2020-07-15 12:00")) == "2020-07-15T08:00:00-04:00"
    assert query.service_time(pd.Timestamp("2020-07-15 12:00", tz="America/Los_Angeles")) == "2020-07-15T15:00:00-04:00"
    assert query.service_time(date(2020, 1, 1)) == "2020-01-01"
    assert query.service_time(5) == 5 and query.service_time("x") == "x"
    assert query.encode(F("modified").isin({date(2020, 1, 1)})) == '[{"field":"modified","op":"in","val":["2020-01-01"]}]'
    assert query.encode({"field": "created", "op": "in", "val": (datetime(2020, 1, 1), date(2021, 2, 3))}) == (
        '[{"field":"created","op":"in","val":["2019-12-31T19:00:00-05:00","2021-02-03"]}]'
    )
    with pytest.raises(ValueError):
        query.encode(F("modified") >= pd.NaT)


def test_parse_errors_carry_position():
    with pytest.raises(QueryError) as e:
        query.parse('[{"field":"year","op":">=","val":01}]')
    assert str(e.value) == "json is not valid JSON: invalid number (at byte 33)"
    assert e.value.position == 33
    with pytest.raises(QueryError) as e:
        query.parse('[{"field":"a","op":"in","val":[1,[2]]}]')
    assert (e.value.field, e.value.op, e.value.position) == ("a", "in", 33)
    with pytest.raises(QueryError) as e:
        query.parse("x" * 9000)
    assert e.value.position == 8192
    with pytest.raises(QueryError, match="more than 32 conditions"):
        query.encode([F("year").not_null()] * 33)
    with pytest.raises(QueryError, match="parse\\(\\) takes JSON text"):
        query.parse(b"[]")  # type: ignore[arg-type]


def test_query_error_pickles_with_its_attributes():
    with pytest.raises(QueryError) as e:
        query.validate(F("year") >= "soon", TRIMS)
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is errors.QueryError
    assert (str(back), back.field, back.op, back.position) == (str(e.value), "year", ">=", None)


def test_every_json_field_of_every_endpoint_validates():
    samples = {"int": 2019, "int64": 2019, "decimal": 2.5, "float": 2.5, "timestamp": "2023-06-29T21:01:06-04:00"}
    checked = 0
    for path, ep in schema.endpoints().items():
        for jf in ep.json_fields:
            value = samples.get(jf.type, "x")
            query.validate([F(jf.name) == value, F(jf.name).isin([value]), F(jf.name).is_null()], path)
            checked += 1
        if not ep.json_fields:
            with pytest.raises(QueryError, match=f"^{path} does not accept the json parameter$"):
                query.validate(F("year") == 1, path)
    assert checked >= 250


# ---- SQL ----------------------------------------------------------------------------------------

def test_to_sql_keeps_hostile_values_out_of_the_text():
    hostile = ["' OR 1=1 --", '"; DROP TABLE trims; --', "100% _x_ \\", "\u202e\U0001f697 \u041b\u0430\u0434\u0430", "?", "x" * 5000]
    for v in hostile:
        sql, params = query.to_sql(F("make") == v, TRIMS)
        assert (sql, params) == ("make COLLATE NOCASE = ?", [v])
    sql, params = query.to_sql(F("trim").isin(hostile), TRIMS)
    assert sql == "trim COLLATE NOCASE IN (" + ", ".join("?" * len(hostile)) + ")"
    assert params == hostile
    sql, params = query.to_sql([F("engines.fuel_type").like("%'%"), F("year") >= "2018"], TRIMS)
    assert sql == "id IN (SELECT trim_id FROM engines WHERE fuel_type LIKE ?) AND year >= ?"
    assert params == ["%'%", 2018]


def test_to_sql_from_json_text_and_wrong_json_types():
    assert query.to_sql('[{"field":"series","op":"is null"}]', TRIMS) == ("series IS NULL", [])
    with pytest.raises(QueryError) as e:
        query.to_sql('[{"field":"year","op":"in","val":[2019,{"a":1}]}]', TRIMS)
    assert str(e.value) == (
        'condition 1 (field "year", op "in"): val[1] must be a scalar (string, number, true, false or null), '
        "got an object (at byte 39)"
    )


# ---- jwt helpers (exposed for tests) -------------------------------------------------------------

def test_jwt_helpers_match_python_hmac():
    import base64
    import hashlib
    import hmac

    token = _core.jwt.sign_hs256('{"sub":"abc","exp":1700000000}', "s3cret")
    head, payload, sig = token.split(".")
    expected = hmac.new(b"s3cret", f"{head}.{payload}".encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64decode(sig + "=") == expected
    assert _core.jwt.verify_hs256(token, "s3cret", 1699999999) == ("ok", '{"sub":"abc","exp":1700000000}')
    assert _core.jwt.verify_hs256(token, "s3cret", 1700000000) == ("expired", None)
    assert _core.jwt.verify_hs256(token, "other", 0) == ("bad_signature", None)
    assert _core.jwt.verify_hs256(token[:-1], "s3cret", 0)[0] in {"bad_signature", "malformed"}
    assert _core.jwt.expiry_unverified(token) == 1700000000
    assert _core.jwt.expiry_unverified("garbage") is None


# ---- the examples in the docstrings are true --------------------------------------------------------

def test_docstring_examples():
    result = doctest.testmod(query, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0


def test_numpy_scalars_keep_their_kind() -> None:
    np = pytest.importorskip("numpy")
    from vehicledata import F
    from vehicledata.query import encode

    assert encode([F("year") == np.int64(2019)]) == '[{"field":"year","op":"=","val":2019}]'
    assert encode([F("size") == np.float64(2.5)]) == '[{"field":"size","op":"=","val":2.5}]'
    assert encode([F("year") == np.bool_(True)]) == '[{"field":"year","op":"=","val":true}]'


def test_text_that_is_not_text_is_a_query_error_naming_its_condition() -> None:
    """A lone surrogate cannot reach the C++ core (its bindings take UTF-8 only): every entry point
    refuses it with a QueryError naming the condition, the field and the character (issue 40, point 7)."""
    cases = [
        (lambda: query.encode([F("year") > 2000, F("make") == "T\ud800"]),
         "condition 2 (field 'make'): 'T\\ud800' is not valid text (surrogates not allowed: '\\ud800' at position 1)",
         "make"),
        (lambda: query.encode(F("make").isin(["BMW", "x\udfff"]), endpoint=TRIMS),
         "condition 1 (field 'make'): 'x\\udfff' is not valid text (surrogates not allowed: '\\udfff' at position 1)",
         "make"),
        (lambda: query.normalize([{"field": "ma\ud800ke", "op": "=", "val": 1}]),
         "condition 1: 'ma\\ud800ke' is not valid text (surrogates not allowed: '\\ud800' at position 2)", None),
        (lambda: query.validate(F("trim").like("%\ud800"), TRIMS),
         "condition 1 (field 'trim'): '%\\ud800' is not valid text", "trim"),
        (lambda: query.to_sql([{"field": "make", "op": "=", "val": "\ud800"}], TRIMS),
         "condition 1 (field 'make'): '\\ud800' is not valid text", "make"),
        (lambda: query.encode('[{"field":"make","op":"=","val":"\ud800"}]'),
         "conditions (JSON text): '[{\"field\":\"make\",\"op\":\"=\",\"val\":\"\\ud800\"}]' is not valid text "
         "(surrogates not allowed: '\\ud800' at position 33)", None),
        (lambda: query.parse("[\ud800]"), "parse() text: '[\\ud800]' is not valid text", None),
    ]
    for call, message, field in cases:
        with pytest.raises(QueryError) as e:
            call()
        assert str(e.value).startswith(message), str(e.value)
        assert e.value.field == field
        str(e.value).encode("utf-8")  # the message itself prints anywhere
    with pytest.raises(QueryError) as e:  # a huge one is echoed cut
        query.encode(F("make") == "y" * 10**6 + "\ud800")
    assert len(str(e.value)) < 600 and "(1,000,001 characters)" in str(e.value)
    # other text, however far from ASCII, is text
    assert query.encode(F("make") == "Škoda 日本") == '[{"field":"make","op":"=","val":"Škoda 日本"}]'
