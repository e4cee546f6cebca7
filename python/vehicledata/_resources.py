"""Typed records, pagers and search resources for type checkers and IDEs.

Generated from the schema table (``cpp/core/schema.cpp``) by ``vehicledata._typegen``
(``tools/gen_docs.py``); do not edit by hand.  A test fails when this file and the schema disagree.
At run time every record is a ``vehicledata.pager.Record`` and these names are that class.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Union

from .pager import Pager, Record

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .client import SearchResource
    from .vehicles import VehiclePager
    from .vehicles import VehiclesResource as _VehiclesResource

    class RecordView(Mapping[str, Any]):
        """What every record has besides its fields (no other attribute: a typo is an error)."""

        def to_dict(self, json_safe: bool = ...) -> Dict[str, Any]: ...
        def frame(self, name: str) -> pd.DataFrame: ...
        @property
        def synthetic_fields(self) -> List[str]: ...

    class MakeRecord(RecordView):
        """A ``make`` record."""

        id: int
        name: str

    class ModelRecord(RecordView):
        """A ``model`` record."""

        id: int
        make_id: int
        name: str
        make: str

    class SubmodelRecord(RecordView):
        """A ``submodel`` record."""

        id: int
        oem_make_model_id: int
        year: int
        make: str
        model: str
        submodel: str

    class TrimRecord(RecordView):
        """A ``trim`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        description: str
        msrp: Optional[int]
        invoice: Optional[int]
        created: datetime
        modified: datetime

    class TrimDetailRecord(RecordView):
        """A ``trim_detail`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        description: str
        msrp: Optional[int]
        invoice: Optional[int]
        created: datetime
        modified: datetime
        bodies: List[BodyLegacyRecord]
        engines: List[EngineLegacyRecord]
        transmissions: List[DescriptionItemRecord]
        drive_types: List[DescriptionItemRecord]
        mileages: List[MileageLegacyRecord]
        exterior_colors: List[ExteriorColorLegacyRecord]
        interior_colors: List[InteriorColorLegacyRecord]

    class DescriptionItemRecord(RecordView):
        """A ``description_item`` record."""

        description: str

    class BodyRecord(RecordView):
        """A ``body`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        trim_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        trim_description: str
        type: Optional[str]
        doors: Optional[int]
        length: Optional[float]
        width: Optional[float]
        seats: Optional[int]
        height: Optional[float]
        wheel_base: Optional[float]
        front_track: Optional[float]
        rear_track: Optional[float]
        ground_clearance: Optional[float]
        cargo_capacity: Optional[float]
        max_cargo_capacity: Optional[float]
        curb_weight: Optional[int]
        gross_weight: Optional[int]
        max_payload: Optional[int]
        max_towing_capacity: Optional[int]

    class BodyLegacyRecord(RecordView):
        """A ``body_legacy`` record."""

        id: int
        make_model_trim_id: int
        type: Optional[str]
        doors: Optional[int]
        length: Optional[float]
        width: Optional[float]
        seats: Optional[int]
        height: Optional[float]
        wheel_base: Optional[float]
        front_track: Optional[float]
        rear_track: Optional[float]
        ground_clearance: Optional[float]
        cargo_capacity: Optional[float]
        max_cargo_capacity: Optional[float]
        curb_weight: Optional[int]
        gross_weight: Optional[int]
        max_payload: Optional[int]
        max_towing_capacity: Optional[int]

    class EngineRecord(RecordView):
        """A ``engine`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        trim_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        trim_description: str
        engine_type: Optional[str]
        fuel_type: Optional[str]
        cylinders: Optional[str]
        size: Optional[float]
        horsepower_hp: Optional[int]
        horsepower_rpm: Optional[int]
        torque_ft_lbs: Optional[int]
        torque_rpm: Optional[int]
        valves: Optional[int]
        valve_timing: Optional[str]
        cam_type: Optional[str]
        drive_type: Optional[str]
        transmission: Optional[str]

    class EngineLegacyRecord(RecordView):
        """A ``engine_legacy`` record."""

        id: int
        make_model_trim_id: int
        engine_type: Optional[str]
        fuel_type: Optional[str]
        cylinders: Optional[str]
        size: Optional[float]
        horsepower_hp: Optional[int]
        horsepower_rpm: Optional[int]
        torque_ft_lbs: Optional[int]
        torque_rpm: Optional[int]
        valves: Optional[int]
        valve_timing: Optional[str]
        cam_type: Optional[str]
        drive_type: Optional[str]
        transmission: Optional[str]
        created: datetime
        modified: datetime

    class MileageRecord(RecordView):
        """A ``mileage`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        trim_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        trim_description: str
        fuel_tank_capacity: Optional[float]
        combined_mpg: Optional[int]
        epa_city_mpg: Optional[int]
        epa_highway_mpg: Optional[int]
        range_city: Optional[int]
        range_highway: Optional[int]
        battery_capacity_electric: Optional[int]
        epa_time_to_charge_hr_240v_electric: Optional[float]
        epa_kwh_100_mi_electric: Optional[int]
        range_electric: Optional[int]
        epa_highway_mpg_electric: Optional[int]
        epa_city_mpg_electric: Optional[int]
        epa_combined_mpg_electric: Optional[int]

    class MileageLegacyRecord(RecordView):
        """A ``mileage_legacy`` record."""

        id: int
        make_model_trim_id: int
        fuel_tank_capacity: Optional[float]
        combined_mpg: Optional[int]
        epa_city_mpg: Optional[int]
        epa_highway_mpg: Optional[int]
        range_city: Optional[int]
        range_highway: Optional[int]
        battery_capacity_electric: Optional[int]
        epa_time_to_charge_hr_240v_electric: Optional[float]
        epa_kwh_100_mi_electric: Optional[int]
        range_electric: Optional[int]
        epa_highway_mpg_electric: Optional[int]
        epa_city_mpg_electric: Optional[int]
        epa_combined_mpg_electric: Optional[int]

    class ExteriorColorRecord(RecordView):
        """A ``exterior_color`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        trim_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        trim_description: str
        color: str
        rgb: str

    class ExteriorColorLegacyRecord(RecordView):
        """A ``exterior_color_legacy`` record."""

        id: int
        make_model_trim_id: int
        name: str
        rgb: str

    class InteriorColorRecord(RecordView):
        """A ``interior_color`` record."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        trim_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        trim_description: str
        color: str
        rgb: str

    class InteriorColorLegacyRecord(RecordView):
        """A ``interior_color_legacy`` record."""

        id: int
        make_model_trim_id: int
        name: str
        rgb: str

    class ObdCodeRecord(RecordView):
        """A ``obd_code`` record."""

        code: str
        description: str

    class VehicleRecord(RecordView):
        """A row of ``api.vehicles`` (``get()``, iteration): the trim's fields, then its body's, engine's
        and mileage's (``vehicledata.vehicles.columns()``; None where the trim has no such part)."""

        id: int
        make_id: int
        model_id: int
        submodel_id: int
        year: int
        make: str
        model: str
        series: Optional[str]
        submodel: str
        trim: str
        description: str
        msrp: Optional[int]
        invoice: Optional[int]
        created: datetime
        modified: datetime
        body_id: Optional[int]
        type: Optional[str]
        doors: Optional[int]
        length: Optional[float]
        width: Optional[float]
        seats: Optional[int]
        height: Optional[float]
        wheel_base: Optional[float]
        front_track: Optional[float]
        rear_track: Optional[float]
        ground_clearance: Optional[float]
        cargo_capacity: Optional[float]
        max_cargo_capacity: Optional[float]
        curb_weight: Optional[int]
        gross_weight: Optional[int]
        max_payload: Optional[int]
        max_towing_capacity: Optional[int]
        engine_id: Optional[int]
        engine_type: Optional[str]
        fuel_type: Optional[str]
        cylinders: Optional[str]
        size: Optional[float]
        horsepower_hp: Optional[int]
        horsepower_rpm: Optional[int]
        torque_ft_lbs: Optional[int]
        torque_rpm: Optional[int]
        valves: Optional[int]
        valve_timing: Optional[str]
        cam_type: Optional[str]
        drive_type: Optional[str]
        transmission: Optional[str]
        mileage_id: Optional[int]
        fuel_tank_capacity: Optional[float]
        combined_mpg: Optional[int]
        epa_city_mpg: Optional[int]
        epa_highway_mpg: Optional[int]
        range_city: Optional[int]
        range_highway: Optional[int]
        battery_capacity_electric: Optional[int]
        epa_time_to_charge_hr_240v_electric: Optional[float]
        epa_kwh_100_mi_electric: Optional[int]
        range_electric: Optional[int]
        epa_highway_mpg_electric: Optional[int]
        epa_city_mpg_electric: Optional[int]
        epa_combined_mpg_electric: Optional[int]

    class MakesPager(Pager):
        """The pager of ``api.makes.search()``: its records are MakeRecord."""

        def __iter__(self) -> Iterator[MakeRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[MakeRecord]: ...  # type: ignore[override]

    class MakesResource(SearchResource):
        """``api.makes``: search /api/makes/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            make: Optional[str] = ...,
            year: Optional[Union[int, str]] = ...,
        ) -> MakesPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> MakesPager: ...  # type: ignore[override]

    class ModelsPager(Pager):
        """The pager of ``api.models.search()``: its records are ModelRecord."""

        def __iter__(self) -> Iterator[ModelRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[ModelRecord]: ...  # type: ignore[override]

    class ModelsResource(SearchResource):
        """``api.models``: search /api/models/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            make_id: Optional[int] = ...,
        ) -> ModelsPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> ModelsPager: ...  # type: ignore[override]

    class SubmodelsPager(Pager):
        """The pager of ``api.submodels.search()``: its records are SubmodelRecord."""

        def __iter__(self) -> Iterator[SubmodelRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[SubmodelRecord]: ...  # type: ignore[override]

    class SubmodelsResource(SearchResource):
        """``api.submodels``: search /api/submodels/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            submodel: Optional[str] = ...,
            oem_make_model_id: Optional[int] = ...,
            make_id: Optional[int] = ...,
        ) -> SubmodelsPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> SubmodelsPager: ...  # type: ignore[override]

    class TrimsPager(Pager):
        """The pager of ``api.trims.search()``: its records are TrimRecord."""

        def __iter__(self) -> Iterator[TrimRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[TrimRecord]: ...  # type: ignore[override]

    class TrimsResource(SearchResource):
        """``api.trims``: search /api/trims/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            trim: Optional[str] = ...,
            description: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
        ) -> TrimsPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> TrimsPager: ...  # type: ignore[override]
        def get(self, key: Union[int, str], *, verbose: Optional[bool] = ..., legacy: bool = ...) -> TrimDetailRecord: ...  # type: ignore[override]

    class BodiesPager(Pager):
        """The pager of ``api.bodies.search()``: its records are BodyRecord."""

        def __iter__(self) -> Iterator[BodyRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[BodyRecord]: ...  # type: ignore[override]

    class BodiesResource(SearchResource):
        """``api.bodies``: search /api/bodies/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
            trim_id: Optional[int] = ...,
            doors: Optional[int] = ...,
            trim: Optional[str] = ...,
            type: Optional[str] = ...,
            description: Optional[str] = ...,
        ) -> BodiesPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> BodiesPager: ...  # type: ignore[override]

    class EnginesPager(Pager):
        """The pager of ``api.engines.search()``: its records are EngineRecord."""

        def __iter__(self) -> Iterator[EngineRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[EngineRecord]: ...  # type: ignore[override]

    class EnginesResource(SearchResource):
        """``api.engines``: search /api/engines/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
            trim_id: Optional[int] = ...,
            size: Optional[float] = ...,
            horsepower_hp: Optional[int] = ...,
            valves: Optional[int] = ...,
            trim: Optional[str] = ...,
            description: Optional[str] = ...,
            cylinders: Optional[str] = ...,
            valve_timing: Optional[str] = ...,
            cam_type: Optional[str] = ...,
            drive_type: Optional[str] = ...,
            transmission: Optional[str] = ...,
            engine_type: Optional[str] = ...,
            fuel_type: Optional[str] = ...,
        ) -> EnginesPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> EnginesPager: ...  # type: ignore[override]

    class MileagesPager(Pager):
        """The pager of ``api.mileages.search()``: its records are MileageRecord."""

        def __iter__(self) -> Iterator[MileageRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[MileageRecord]: ...  # type: ignore[override]

    class MileagesResource(SearchResource):
        """``api.mileages``: search /api/mileages/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
            trim_id: Optional[int] = ...,
            combined_mpg: Optional[int] = ...,
            epa_city_mpg: Optional[int] = ...,
            epa_highway_mpg: Optional[int] = ...,
            range_city: Optional[int] = ...,
            range_highway: Optional[int] = ...,
            trim: Optional[str] = ...,
            description: Optional[str] = ...,
        ) -> MileagesPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> MileagesPager: ...  # type: ignore[override]

    class ExteriorColorsPager(Pager):
        """The pager of ``api.exterior_colors.search()``: its records are ExteriorColorRecord."""

        def __iter__(self) -> Iterator[ExteriorColorRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[ExteriorColorRecord]: ...  # type: ignore[override]

    class ExteriorColorsResource(SearchResource):
        """``api.exterior_colors``: search /api/exterior-colors/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
            trim_id: Optional[int] = ...,
            color: Optional[str] = ...,
            rgb: Optional[str] = ...,
            trim: Optional[str] = ...,
            description: Optional[str] = ...,
        ) -> ExteriorColorsPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> ExteriorColorsPager: ...  # type: ignore[override]

    class InteriorColorsPager(Pager):
        """The pager of ``api.interior_colors.search()``: its records are InteriorColorRecord."""

        def __iter__(self) -> Iterator[InteriorColorRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[InteriorColorRecord]: ...  # type: ignore[override]

    class InteriorColorsResource(SearchResource):
        """``api.interior_colors``: search /api/interior-colors/v2."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
            trim_id: Optional[int] = ...,
            color: Optional[str] = ...,
            rgb: Optional[str] = ...,
            trim: Optional[str] = ...,
            description: Optional[str] = ...,
        ) -> InteriorColorsPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> InteriorColorsPager: ...  # type: ignore[override]

    class ObdCodesPager(Pager):
        """The pager of ``api.obd_codes.search()``: its records are ObdCodeRecord."""

        def __iter__(self) -> Iterator[ObdCodeRecord]: ...  # type: ignore[override]
        def first(self, n: int) -> List[ObdCodeRecord]: ...  # type: ignore[override]

    class ObdCodesResource(SearchResource):
        """``api.obd_codes``: search /api/obd-codes."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,
            verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,
            progress: Optional[bool] = ..., start_token: Optional[str] = ...,
            code: Optional[str] = ...,
            description: Optional[str] = ...,
        ) -> ObdCodesPager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> ObdCodesPager: ...  # type: ignore[override]
        def get(self, key: Union[int, str], *, verbose: Optional[bool] = ..., legacy: bool = ...) -> ObdCodeRecord: ...  # type: ignore[override]

    class VehiclesResource(_VehiclesResource):
        """``api.vehicles``: its search takes the trims search's keywords (``vehicledata.vehicles``)."""

        def search(  # type: ignore[override]
            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,
            direction: Optional[str] = ..., limit: Optional[int] = ..., progress: Optional[bool] = ...,
            year: Optional[int] = ...,
            make: Optional[str] = ...,
            model: Optional[str] = ...,
            series: Optional[str] = ...,
            submodel: Optional[str] = ...,
            trim: Optional[str] = ...,
            description: Optional[str] = ...,
            make_id: Optional[int] = ...,
            model_id: Optional[int] = ...,
            submodel_id: Optional[int] = ...,
        ) -> VehiclePager: ...

        def __call__(self, *conditions: Any, **kwargs: Any) -> VehiclePager: ...  # type: ignore[override]

else:
    MakeRecord = Record
    ModelRecord = Record
    SubmodelRecord = Record
    TrimRecord = Record
    TrimDetailRecord = Record
    DescriptionItemRecord = Record
    BodyRecord = Record
    BodyLegacyRecord = Record
    EngineRecord = Record
    EngineLegacyRecord = Record
    MileageRecord = Record
    MileageLegacyRecord = Record
    ExteriorColorRecord = Record
    ExteriorColorLegacyRecord = Record
    InteriorColorRecord = Record
    InteriorColorLegacyRecord = Record
    ObdCodeRecord = Record
    VehicleRecord = Record
    MakesPager = Pager
    ModelsPager = Pager
    SubmodelsPager = Pager
    TrimsPager = Pager
    BodiesPager = Pager
    EnginesPager = Pager
    MileagesPager = Pager
    ExteriorColorsPager = Pager
    InteriorColorsPager = Pager
    ObdCodesPager = Pager

__all__ = ["MakeRecord", "ModelRecord", "SubmodelRecord", "TrimRecord", "TrimDetailRecord", "DescriptionItemRecord", "BodyRecord", "BodyLegacyRecord", "EngineRecord", "EngineLegacyRecord", "MileageRecord", "MileageLegacyRecord", "ExteriorColorRecord", "ExteriorColorLegacyRecord", "InteriorColorRecord", "InteriorColorLegacyRecord", "ObdCodeRecord", "VehicleRecord", "MakesPager", "ModelsPager", "SubmodelsPager", "TrimsPager", "BodiesPager", "EnginesPager", "MileagesPager", "ExteriorColorsPager", "InteriorColorsPager", "ObdCodesPager"]
