// A run-layer header (the target of the fixture's upward include).
#pragma once
