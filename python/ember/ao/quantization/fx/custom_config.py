"""The custom configurations of FX graph mode quantization (torch.ao.quantization.fx
.custom_config): the modules prepare_fx leaves untraced, and the model attributes prepare_fx,
convert_fx and fuse_fx carry over to the GraphModule they return. Each setter returns the
config, so calls chain; to_dict gives the dict form (the keys torch's functions also take)."""

__all__ = ["ConvertCustomConfig", "FuseCustomConfig", "PrepareCustomConfig"]

# attribute -> dict key
_KEYS = {
    "non_traceable_module_names": "non_traceable_module_name",
    "non_traceable_module_classes": "non_traceable_module_class",
    "preserved_attributes": "preserved_attributes",
}


class _CustomConfig:
    _FIELDS = ("preserved_attributes",)

    def __init__(self):
        for field in self._FIELDS:
            setattr(self, field, [])

    def set_preserved_attributes(self, attributes):
        """set_preserved_attributes(attributes)

        Names of the model's attributes the returned GraphModule keeps."""
        self.preserved_attributes = list(attributes)
        return self

    @classmethod
    def from_dict(cls, custom_config_dict):
        """from_dict(custom_config_dict)

        The config from its dict form."""
        config = cls()
        for field in cls._FIELDS:
            setattr(config, field, list(custom_config_dict.get(_KEYS[field], [])))
        return config

    def to_dict(self):
        """to_dict() -> dict

        The dict form: the settings that are set, by torch's keys."""
        return {_KEYS[f]: getattr(self, f) for f in self._FIELDS if getattr(self, f)}

    def __repr__(self):
        set_fields = {f: getattr(self, f) for f in self._FIELDS if getattr(self, f)}
        return f"{type(self).__name__}({set_fields})"


class PrepareCustomConfig(_CustomConfig):
    """PrepareCustomConfig()

    prepare_fx's custom configuration: submodules left untraced (called as leaves, neither
    fused nor observed inside) by qualified name or by class, and preserved attributes."""

    _FIELDS = ("non_traceable_module_names", "non_traceable_module_classes", "preserved_attributes")

    def set_non_traceable_module_names(self, module_names):
        """set_non_traceable_module_names(module_names)"""
        self.non_traceable_module_names = list(module_names)
        return self

    def set_non_traceable_module_classes(self, module_classes):
        """set_non_traceable_module_classes(module_classes)"""
        self.non_traceable_module_classes = list(module_classes)
        return self


class ConvertCustomConfig(_CustomConfig):
    """ConvertCustomConfig()

    convert_fx's custom configuration: preserved attributes."""


class FuseCustomConfig(_CustomConfig):
    """FuseCustomConfig()

    fuse_fx's custom configuration: preserved attributes."""
