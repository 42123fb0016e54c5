"""ember.export.passes: passes over ExportedPrograms (torch.export.passes)."""

import copy

__all__ = ["move_to_device_pass"]


def move_to_device_pass(ep, location):
    """move_to_device_pass(ep, location) -> ExportedProgram

    A copy of ``ep`` whose parameters, buffers and constants are on ``location``: a device (or
    its name), or a dict from the current devices' names to new ones."""
    import ember

    def move(t):
        if not isinstance(t, ember.Tensor):
            return t
        target = (
            location.get(str(t.device), str(t.device)) if isinstance(location, dict) else location
        )
        out = t.to(target)
        if isinstance(t, ember.nn.Parameter) and not isinstance(out, ember.nn.Parameter):
            out = ember.nn.Parameter(out, requires_grad=t.requires_grad)
        return out

    new = copy.copy(ep)
    new._state_dict = {k: move(v) for k, v in ep.state_dict.items()}
    new._constants = {k: move(v) for k, v in ep.constants.items()}
    return new
