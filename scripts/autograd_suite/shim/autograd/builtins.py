"""autograd.builtins: under adsrc, Python's own containers and isinstance need no boxes."""
import builtins as _builtins

tuple = _builtins.tuple
list = _builtins.list
dict = _builtins.dict
isinstance = _builtins.isinstance
type = _builtins.type
SequenceBox = DictBox = None
