"""Energy and cost: component power -> kWh and money for an iteration and for the whole run.

Power is each component's catalog figure (per server as
:func:`designer.topology.validation.server_power_W` splits it, catalog maxima; the NICs and DPUs
at their typical power ``typical_power_W`` where scenario ``adapter_power`` says so, see
:func:`designer.engine.resources.adapter_power_basis`; switch and storage power), held for the
whole iteration:
``kWh = W * s / 3.6e6``. Performance per watt is samples per second per kW.
"""

from __future__ import annotations


def kwh(power_W: float, seconds: float) -> float:
    return power_W * seconds / 3.6e6


def samples_per_s_per_kW(samples_per_iteration: float, iteration_s: float, power_W: float) -> float:
    if iteration_s <= 0 or power_W <= 0:
        return 0.0
    return samples_per_iteration / iteration_s / (power_W / 1000.0)
