package store

// Conversions between the API's int and the int4 columns the generated code reads as int32.

// intPtr widens a nullable int4 value.
func intPtr(v *int32) *int {
	if v == nil {
		return nil
	}
	return ptr(int(*v))
}

// int32Ptr narrows a nullable int for an int4 column (values are range-checked by the API).
func int32Ptr(v *int) *int32 {
	if v == nil {
		return nil
	}
	return ptr(int32(*v))
}
